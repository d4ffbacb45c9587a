// errc.cpp — names for error kinds, as they appear in logs and JSON,
// generated from the one list in result.hpp.
#include "courier/result.hpp"

namespace courier {

const char* errc_name(Errc code) {
  switch (code) {
#define COURIER_ERRC_NAME(n) \
  case Errc::n:              \
    return #n;
    COURIER_ERRC_LIST(COURIER_ERRC_NAME)
#undef COURIER_ERRC_NAME
  }
  return "unknown";
}

}  // namespace courier
