// GIO (GDBus) wrappers: D-Bus calls that take GVariant format strings (variadic, so Swift cannot
// make them): NetworkManager's metered state, and the agent's watch of logind, screen-saver and
// NetworkManager signals (bus_shim.h). Every name is prefixed `CGioShims_`; strings they return are
// freed with `CGioShims_free`, never with another library's free function.
#pragma once
#include "bus_shim.h"

/// NetworkManager's overall `Metered` property over the system D-Bus: 0 unknown, 1 yes, 2 no,
/// 3 guessed yes, 4 guessed no. Returns 0 and sets *out on success; -1 when there is no system
/// bus or no NetworkManager (message in *err, freed with CGioShims_free).
int CGioShims_nm_metered(unsigned int *out, char **err);

/// Frees a message returned by a `CGioShims_` function (`g_free`).
void CGioShims_free(char *p);
