#include "parquet/schema.h"

#include "common/error.h"

namespace bt::parquet {
namespace {

constexpr int kMaxNesting = 32;

void walk(const std::vector<SchemaElement>& el, size_t& i, std::vector<std::string>& path, int def, int rep,
          Schema& out) {
  if (i >= el.size()) fail("schema: ", el.size(), " elements but the tree needs more");
  if (path.size() >= static_cast<size_t>(kMaxNesting)) fail("schema: nested deeper than ", kMaxNesting);
  const SchemaElement& e = el[i++];
  if (e.repetition == Repetition::Optional) ++def;
  else if (e.repetition == Repetition::Repeated) ++def, ++rep;
  else if (e.repetition != Repetition::Required) fail("schema: field '", e.name, "' has a bad repetition type");
  path.push_back(e.name);
  if (path.size() == 1) {
    out.top.push_back(e.name);
    out.top_is_group.push_back(e.num_children > 0);
  }
  if (e.num_children < 0) fail("schema: field '", e.name, "' has a negative child count");
  if (e.num_children == 0 && !e.has_type) {
    // An empty group holds no data; nothing to read.
  } else if (e.num_children == 0) {
    LeafColumn c;
    for (size_t k = 0; k < path.size(); ++k) c.name += (k ? "." : "") + path[k];
    c.path = path;
    c.type = e.type;
    c.max_def = def;
    c.max_rep = rep;
    c.is_string = e.converted_type == 0 || e.logical_type == 1;
    out.leaves.push_back(std::move(c));
  } else {
    if (static_cast<size_t>(e.num_children) > el.size() - i)
      fail("schema: field '", e.name, "' claims ", e.num_children, " children; only ", el.size() - i, " remain");
    for (int32_t k = 0; k < e.num_children; ++k) walk(el, i, path, def, rep, out);
  }
  path.pop_back();
}

}  // namespace

Schema build_schema(const std::vector<SchemaElement>& el) {
  if (el.empty()) fail("schema: empty");
  const SchemaElement& root = el[0];
  if (root.num_children < 0 || static_cast<size_t>(root.num_children) > el.size() - 1)
    fail("schema: root claims ", root.num_children, " children; only ", el.size() - 1, " elements follow");
  Schema s;
  size_t i = 1;
  std::vector<std::string> path;
  for (int32_t k = 0; k < root.num_children; ++k) walk(el, i, path, 0, 0, s);
  if (i != el.size()) fail("schema: ", el.size() - i, " elements are not part of the tree");
  return s;
}

}  // namespace bt::parquet
