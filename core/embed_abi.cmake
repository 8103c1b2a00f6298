# Writes the plugin ABI header into a C++ source as a raw string literal.
file(READ ${IN} text)
file(WRITE ${OUT} "// Generated from sdk/include/blis/plugin.h; do not edit.\n"
  "namespace blis::lua { extern const char* const kAbiHeaderText; }\n"
  "const char* const blis::lua::kAbiHeaderText = R\"blis_abi(${text})blis_abi\";\n")
