#pragma once
#include <stddef.h>

/// Result of a keyring call: 0 ok, 1 not found, -1 error (message in `err`, caller frees with CSecretShims_free).
/// Stores `secret` (NUL-terminated text) under schema org.vault.Session with attribute vault=<vault_id>.
int CSecretShims_store(const char *vault_id, const char *label, const char *secret, char **err);
/// Looks up the item; on 0 `*out` holds a copy the caller must release with CSecretShims_free_secret.
int CSecretShims_lookup(const char *vault_id, char **out, char **err);
/// Removes the item; 0 removed, 1 nothing there.
int CSecretShims_clear(const char *vault_id, char **err);
/// Removes every item of the schema (every vault's session); 0 removed some, 1 nothing there.
int CSecretShims_clear_all(char **err);
/// Frees an error message.
void CSecretShims_free(char *p);
/// Zeroes and frees a secret returned by lookup.
void CSecretShims_free_secret(char *p);
/// 1 when a Secret Service answers on the session bus, else 0 (message in err).
int CSecretShims_service_available(char **err);
