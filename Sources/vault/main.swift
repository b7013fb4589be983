import VaultCLI
#if canImport(Glibc)
import Glibc
#endif

exit(VaultCommandLine.main())
