// libfuse3's low-level API (Debian libfuse3-dev 3.14), at the 3.5 API level.
#define FUSE_USE_VERSION 35
#include <fuse_lowlevel.h>
