#pragma once
#include <stddef.h>

/// Result of a keyring call: 0 ok, 1 not found, -1 error (message in `err`, caller frees with CSecretShims_free).
/// Stores `secret` (NUL-terminated text) under schema org.vault.LocalSession with attributes
/// vault=<vault_id>, copy=<copy_id> (one item per local copy of a vault).
int CSecretShims_store(const char *vault_id, const char *copy_id, const char *label, const char *secret, char **err);
/// Looks up the item; on 0 `*out` holds a copy the caller must release with CSecretShims_free_secret.
int CSecretShims_lookup(const char *vault_id, const char *copy_id, char **out, char **err);
/// Removes the item; 0 removed, 1 nothing there.
int CSecretShims_clear(const char *vault_id, const char *copy_id, char **err);
/// Removes the item an older version kept for the vault (schema org.vault.Session, attribute
/// vault only, shared by every local copy); 0 removed, 1 nothing there.
int CSecretShims_clear_legacy(const char *vault_id, char **err);
/// Removes every item of both schemas (every vault's session); 0 removed some, 1 nothing there.
int CSecretShims_clear_all(char **err);
/// Frees an error message.
void CSecretShims_free(char *p);
/// Zeroes and frees a secret returned by lookup.
void CSecretShims_free_secret(char *p);
/// 1 when a Secret Service answers on the session bus, else 0 (message in err).
int CSecretShims_service_available(char **err);
