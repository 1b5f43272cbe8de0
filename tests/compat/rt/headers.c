/* The compat headers compile as C11 (with -Wall -Wextra -Wpedantic -Werror) and carry CANN's
 * values; see header_checks.inc. */
#include "header_checks.inc"

int main(void) {
    return ferry_prototypes_present() ? 0 : 1;
}
