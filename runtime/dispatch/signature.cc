#include "runtime/dispatch/signature.h"

#include "absl/strings/str_cat.h"
#include "runtime/core/error.h"

namespace opspec::internal {

namespace {
bool kind_matches(TypeKind schema_kind, TypeKind cpp_kind) {
  if (schema_kind == cpp_kind) return true;
  // Layout, MemoryFormat and Generator travel as ints.
  return cpp_kind == TypeKind::kInt && (schema_kind == TypeKind::kLayout || schema_kind == TypeKind::kMemoryFormat ||
                                        schema_kind == TypeKind::kGenerator);
}
}  // namespace

void check_signature_tags(const FunctionSchema& schema, const CppArgTag* args, size_t num_args, int num_returns,
                          TypeKind return_kind, bool return_list, std::string_view where) {
  const auto& params = schema.arguments();
  OPSPEC_CHECK(num_args == params.size(), schema.qualified_name(), " kernel for ", where, " takes ", num_args,
               " argument(s) but the schema has ", params.size(), ": ", schema.str());
  for (size_t i = 0; i < num_args; ++i) {
    const ArgType& t = params[i].type;
    const bool optional = t.is_optional || t.kind == TypeKind::kGenerator;
    OPSPEC_CHECK(args[i].valid, schema.qualified_name(), " kernel for ", where, ": parameter ", i + 1, " ('",
                 params[i].name, "') has a C++ type with no schema mapping (see runtime/dispatch/signature.h)");
    OPSPEC_CHECK(kind_matches(t.kind, args[i].kind) && args[i].list == t.is_list && args[i].optional == optional &&
                     args[i].element_optional == t.element_optional,
                 schema.qualified_name(), " kernel for ", where, ": parameter ", i + 1, " ('", params[i].name,
                 "') is ", t.str(), " in the schema but the C++ type does not map to it (see "
                 "runtime/dispatch/signature.h)");
  }
  const auto& rets = schema.returns();
  OPSPEC_CHECK(num_returns == static_cast<int>(rets.size()), schema.qualified_name(), " kernel for ", where,
               " returns ", num_returns, " value(s) but the schema has ", rets.size());
  if (rets.size() == 1) {
    OPSPEC_CHECK(rets[0].type.kind == return_kind && rets[0].type.is_list == return_list, schema.qualified_name(),
                 " kernel for ", where, " returns the wrong type; the schema says ", rets[0].type.str());
  }
}

}  // namespace opspec::internal
