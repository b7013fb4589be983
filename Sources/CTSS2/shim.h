// tpm2-tss (Debian libtss2-dev 3.2): the Enhanced System API, the TCTI loader, marshalling and
// response-code decoding. Swift reaches them only through CTPMShims.
#include <tss2/tss2_esys.h>
#include <tss2/tss2_sys.h>
#include <tss2/tss2_tctildr.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
