// libfido2 (Debian libfido2-dev 1.12): CTAP2 over HID, and over caller-given I/O functions.
// Swift reaches it only through CFIDO2Shims.
#include <fido.h>
#include <fido/err.h>
