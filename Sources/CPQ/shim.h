// libpq, PostgreSQL's client library (Debian libpq-dev). Every call vault makes is non-variadic,
// so no shim target is needed: VaultPostgres calls these directly.
#include <libpq-fe.h>
