// The shell every HTML report page shares: one self-contained document with its CSS and
// script inline (no network, no external fonts), and the small building blocks of its
// sections. The script selects a node of the search tree (showing its details), sorts
// tables by a clicked column, and marks <body data-ke-ready="1"> once it has run.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace kernelevolve::report {

/// A complete HTML 5 document: `title` (escaped here) and `body_html` (already HTML),
/// with the report's stylesheet and script inline. `body_attributes` go on <body> as
/// written (e.g. data-best-node="12").
std::string HtmlPage(const std::string& title, const std::string& body_html, const std::string& body_attributes = "");

/// A two-column key/value table; keys and values are escaped here.
std::string KeyValueTable(const std::vector<std::pair<std::string, std::string>>& rows, const std::string& css_class = "kv");

/// The same, with values that are already HTML (keys escaped).
std::string KeyValueTableHtml(const std::vector<std::pair<std::string, std::string>>& rows,
                              const std::string& css_class = "kv");

/// A JSON scalar of `doc` as text ("" for null or missing); floats with up to 4
/// significant digits, other values as JSON.
std::string JsonScalarText(const nlohmann::json& doc, const char* key);

/// The "machine" card of a run or bench report from a result.json / bench.json
/// `machine` object (core::MachineToJson): CPU model, ISA (level and features), cores,
/// threads, compiler, torch, host, measured peaks; `extra` rows follow (e.g. the GPU).
std::string MachineCardHtml(const nlohmann::json& machine,
                            const std::vector<std::pair<std::string, std::string>>& extra = {});

}  // namespace kernelevolve::report
