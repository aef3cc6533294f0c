"""kernelevolve's Python worker: loads KernelBench-format problems, writes fixtures,
captures the ATen graph and times the eager baseline for the C++ side.

Run as ``python -m kernelevolve_worker`` (JSON lines on stdin/stdout, see protocol.py).
This package init imports nothing heavy so the stdout redirect in __main__ happens
before torch or any problem file is imported.
"""
