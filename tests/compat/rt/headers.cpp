// The compat headers compile as C++20 and carry CANN's values; see header_checks.inc.
#include "header_checks.inc"

int main() {
    return ferry_prototypes_present() ? 0 : 1;
}
