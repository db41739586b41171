// The leaf columns of a parquet schema (the flattened, depth-first SchemaElement list), with the dotted
// names users select them by ("image.bytes", "image_description") and their max definition/repetition levels.
#pragma once
#include <string>
#include <vector>

#include "parquet/metadata.h"

namespace bt::parquet {

struct LeafColumn {
  std::string name;  // dotted path, e.g. "image.bytes"
  std::vector<std::string> path;
  Type type = Type::Boolean;
  int max_def = 0;
  int max_rep = 0;
  bool is_string = false;  // UTF8 converted type or STRING logical type
};

struct Schema {
  std::vector<LeafColumn> leaves;    // in column-chunk order
  std::vector<std::string> top;      // top-level field names, in order (for error messages)
  std::vector<bool> top_is_group;
};

// Throws bt::Error on a malformed tree (bad child counts, leaves without type, nesting deeper than 32).
Schema build_schema(const std::vector<SchemaElement>& elements);

}  // namespace bt::parquet
