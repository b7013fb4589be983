#pragma once

/// NetworkManager's overall `Metered` property over the system D-Bus: 0 unknown, 1 yes, 2 no,
/// 3 guessed yes, 4 guessed no. Returns 0 and sets *out on success; -1 when there is no system
/// bus or no NetworkManager (message in *err, freed with vault_secret_free).
int vault_nm_metered(unsigned int *out, char **err);
