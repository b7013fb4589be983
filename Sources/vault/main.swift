import VaultCLI
import CLinuxShims
#if canImport(Glibc)
import Glibc
#endif

// Two malloc arenas at most, not one per thread (glibc's default, 8 per core): a sync's prefetch
// and transfer threads each kept an arena of freed pages resident (issue 10, peak memory).
CLinuxShims_limit_malloc_arenas(2)

exit(VaultCommandLine.main())
