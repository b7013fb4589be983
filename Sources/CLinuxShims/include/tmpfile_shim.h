#pragma once

/// Opens an unnamed regular file in folder `dir` for reading and writing, mode 0600
/// (`O_TMPFILE`): it has no name, so nothing of it is left once it is closed or the process dies.
/// Returns the descriptor, or -1 with errno set (EOPNOTSUPP or EISDIR where the filesystem has no
/// `O_TMPFILE`).
int CLinuxShims_open_unnamed(const char *dir);
