// errc.cpp — names for error kinds, as they appear in logs and JSON,
// generated from the one list in result.hpp.
#include "courier/result.hpp"

namespace courier {

const char* errc_name(Errc code) { return enum_word(code).data(); }

}  // namespace courier
