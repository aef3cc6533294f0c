#!/usr/bin/env python3
"""A local stand-in for the OpenAI Chat Completions and Anthropic Messages APIs.

Standard library only. It speaks both protocols as the real services do (paths,
headers, request validation, JSON shapes with `usage`, error bodies, Retry-After) and
serves recorded kernels for the test problems, so that `kernelevolve optimize --llm
openai:test-model --llm-base-url http://127.0.0.1:PORT/v1` runs end to end without the
internet. Misbehaviour is scripted per test in a scenario file:

    {"script": [{"action": "429", "retry_after": "1"}, {"action": "hang", "seconds": 30},
                {"action": "ok", "kernel": "broken"}, ...],
     "default": {"action": "ok"}}

Requests take the script's entries in arrival order (both endpoints share one counter);
once it is used up, every request gets `default`. Actions:

    ok          200 with a recorded kernel (kernels/<problem>.cpp, or "kernel": NAME), in
                the language the system message asks for: .py (Triton), .cu (CUDA C++)
                or .cpp
    edit        200 with a SEARCH/REPLACE edit of the parent (a comment line), or ok
    no_code     200 whose text holds no code (the client's parser must reject it)
    status      an error response: "code" (401, 403, 404, 429, 500, 503, 529, ...),
                "retry_after" optional; bodies shaped as the provider's
    429 / 500 / 529   shorthands for status with that code
    hang        accepts, reads the request, sends nothing for "seconds" (default 60)
    slow        sends the 200 response in small pieces over "seconds" (default 1)
    truncated   200 announcing a longer Content-Length than it sends, then closes
    malformed   200 with a body that is not JSON

Every response is logged as one JSON line to --log: request number, protocol, model,
action, HTTP status, and the usage it carried (input/output tokens; "billed": true when
a complete, well-formed body with usage was sent). Usage: input tokens = request bytes //
4, output tokens = response text bytes // 4 + 1 (a fixed, checkable rule).

Run:  fake_llm_server.py --port-file PORT_FILE --scenario S.json --log calls.jsonl
      [--api-key KEY] [--models test-model,other] [--kernels DIR]
"""

import argparse
import http.server
import json
import os
import re
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


class State:
    def __init__(self, args):
        self.lock = threading.Lock()
        self.count = 0
        self.args = args
        with open(args.scenario) as f:
            scenario = json.load(f) if args.scenario else {}
        self.script = scenario.get("script", [])
        self.default = scenario.get("default", {"action": "ok"})
        self.models = set(m for m in args.models.split(",") if m)

    def next(self):
        with self.lock:
            n = self.count
            self.count += 1
        step = self.script[n] if n < len(self.script) else self.default
        return n, step

    def log(self, entry):
        with self.lock:
            with open(self.args.log, "a") as f:
                f.write(json.dumps(entry) + "\n")


def openai_error(status, message, type_, code):
    return status, {"error": {"message": message, "type": type_, "param": None, "code": code}}


def anthropic_error(status, type_, message):
    return status, {"type": "error", "error": {"type": type_, "message": message},
                    "request_id": "req_fake%06d" % status}


ERROR_TYPES = {
    # status: (openai type, openai code, anthropic type, message)
    400: ("invalid_request_error", None, "invalid_request_error", "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "authentication_error", "Incorrect API key provided."),
    403: ("invalid_request_error", "unsupported_country_region_territory", "permission_error",
          "Your API key does not have permission to use the specified resource."),
    404: ("invalid_request_error", "model_not_found", "not_found_error", "The model does not exist."),
    429: ("requests", "rate_limit_exceeded", "rate_limit_error",
          "Rate limit reached for requests. Please try again later."),
    500: ("server_error", None, "api_error", "The server had an error while processing your request."),
    503: ("server_error", None, "api_error", "The engine is currently overloaded."),
    529: ("server_error", None, "overloaded_error", "Overloaded"),
}


def error_body(protocol, status, message=None):
    otype, ocode, atype, default_message = ERROR_TYPES.get(status, ("server_error", None, "api_error", "Error"))
    message = message or default_message
    if protocol == "openai":
        return openai_error(status, message, otype, ocode)
    return anthropic_error(status, atype, message)


def prompt_text(protocol, body):
    parts = []
    if protocol == "anthropic" and isinstance(body.get("system"), str):
        parts.append(body["system"])
    for m in body.get("messages", []):
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(b.get("text", "") for b in content if isinstance(b, dict))
    return "\n".join(parts)


# The kernel language a prompt asks for, from its system message (prompts/v2/system.md:
# "fast, correct <language> kernels"): (file extension, fence tag, comment marker).
LANGUAGES = {"Triton": (".py", "python", "#"), "CUDA C++": (".cu", "cuda", "//"), "C++": (".cpp", "cpp", "//")}


def prompt_language(prompt):
    for language in ("Triton", "CUDA C++", "C++"):
        if "fast, correct %s kernels" % language in prompt:
            return LANGUAGES[language]
    return LANGUAGES["C++"]


def answer_text(step, prompt, n, kernels_dir):
    action = step.get("action", "ok")
    ext, fence, comment = prompt_language(prompt)
    if action == "no_code":
        return "I would use AVX2 intrinsics here, but I will not write the code now."
    if action == "edit" and "# The kernel to improve" in prompt:
        anchor = "import triton\n" if ext == ".py" else "#include <dlpack/dlpack.h>\n"
        return ("Adds a marker comment to the parent kernel.\n\n<<<<<<< SEARCH\n%s=======\n%s%s edited by "
                "fake-server response %d\n>>>>>>> REPLACE\n" % (anchor, anchor, comment, n))
    name = step.get("kernel")
    if not name:
        match = re.search(r"^# The problem: (\S+)", prompt, re.M)
        name = match.group(1) if match else "unknown"
    path = os.path.join(kernels_dir, name + ext)
    if not os.path.exists(path):
        return "I have no recorded kernel for problem %s." % name
    with open(path) as f:
        code = f.read()
    code = code.rstrip("\n") + "\n%s fake-server response %d\n" % (comment, n)  # each answer is a new kernel
    return "Recorded kernel %s: one pass over the tensor.\n\n```%s\n%s```\n" % (name, fence, code)


def success_body(protocol, model, text, input_tokens, output_tokens, n):
    if protocol == "openai":
        return {"id": "chatcmpl-fake%06d" % n, "object": "chat.completion", "created": int(time.time()),
                "model": model, "system_fingerprint": "fp_fake",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None},
                             "logprobs": None, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": input_tokens, "completion_tokens": output_tokens,
                          "total_tokens": input_tokens + output_tokens}}
    return {"id": "msg_fake%06d" % n, "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-llm/1"

    def log_message(self, fmt, *args):  # keep test output quiet
        pass

    def send_json(self, status, doc, headers=None):
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        state = self.server.state
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        if self.path.rstrip("/") == "/v1/chat/completions":
            protocol = "openai"
        elif self.path.rstrip("/") == "/v1/messages":
            protocol = "anthropic"
        else:
            self.send_json(404, {"error": {"message": "Unknown path %s" % self.path, "type": "invalid_request_error",
                                           "param": None, "code": "unknown_url"}})
            return
        # A request the real API would refuse (key, version header, body, model) is
        # answered before it takes a step of the script.
        status, doc, headers = self.validate(protocol, raw, state)
        entry = {"n": None, "protocol": protocol, "action": "refused", "input_tokens": 0,
                 "output_tokens": 0, "billed": False}
        if status is None:
            n, step = state.next()
            entry.update(n=n, action=step.get("action", "ok"))
            status, doc, headers = self.perform(protocol, json.loads(raw), step, n, entry, state)
        entry["status"] = status
        state.log(entry)  # before the answer leaves, so a client that got it finds it logged
        if status is not None:
            self.send_json(status, doc, headers)

    def validate(self, protocol, raw, state):
        key = state.args.api_key
        if protocol == "openai":
            if key and self.headers.get("Authorization") != "Bearer " + key:
                return (*error_body("openai", 401, "Incorrect API key provided: %s." %
                                    (self.headers.get("Authorization") or "(none)")), {})
        else:
            if key and self.headers.get("x-api-key") != key:
                return (*error_body("anthropic", 401, "invalid x-api-key"), {})
            if self.headers.get("anthropic-version") != "2023-06-01":
                return (*error_body("anthropic", 400, "anthropic-version: header is required"), {})
        try:
            body = json.loads(raw)
        except ValueError:
            return (*error_body(protocol, 400, "We could not parse the JSON body of your request."), {})
        required = ["model", "messages"] + (["max_tokens"] if protocol == "anthropic" else [])
        for field in required:
            if field not in body:
                return (*error_body(protocol, 400, "%s: Field required" % field), {})
        if state.models and body["model"] not in state.models:
            message = ("The model `%s` does not exist or you do not have access to it." % body["model"]
                       if protocol == "openai" else "model: %s" % body["model"])
            return (*error_body(protocol, 404, message), {})
        return None, None, None

    def perform(self, protocol, body, step, n, entry, state):
        action = step.get("action", "ok")
        code = {"429": 429, "500": 500, "529": 529}.get(action, step.get("code"))
        if action in ("429", "500", "529", "status"):
            headers = {"Retry-After": str(step["retry_after"])} if "retry_after" in step else {}
            if code == 429:
                headers.setdefault("x-ratelimit-remaining-requests", "0")
            return (*error_body(protocol, code), headers)
        if action == "hang":
            time.sleep(float(step.get("seconds", 60)))
            self.close_connection = True
            return None, None, None
        prompt = prompt_text(protocol, body)
        text = answer_text(step, prompt, n, state.args.kernels)
        input_tokens = len(json.dumps(body).encode()) // 4
        output_tokens = len(text.encode()) // 4 + 1
        doc = success_body(protocol, body["model"], text, input_tokens, output_tokens, n)
        data = json.dumps(doc).encode()
        if action == "malformed":
            self.raw_response(200, data[: len(data) // 2] + b"<<not json", len(data) // 2 + 10)
            return None, None, None
        if action == "truncated":
            self.raw_response(200, data[: len(data) // 3], len(data))
            self.close_connection = True
            return None, None, None
        entry.update(input_tokens=input_tokens, output_tokens=output_tokens, billed=True, model=body["model"])
        if action == "slow":
            pieces = 8
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            step_bytes = len(data) // pieces + 1
            for i in range(0, len(data), step_bytes):
                self.wfile.write(data[i:i + step_bytes])
                self.wfile.flush()
                time.sleep(float(step.get("seconds", 1)) / pieces)
            return None, None, None
        return 200, doc, {}

    def raw_response(self, status, payload, announced_length):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(announced_length))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", required=True, help="the bound port is written here")
    parser.add_argument("--scenario", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--api-key", default="", help="require this key (Bearer / x-api-key)")
    parser.add_argument("--models", default="", help="comma-separated models that exist (others: 404)")
    parser.add_argument("--kernels", default=os.path.join(HERE, "kernels"))
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.state = State(args)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
