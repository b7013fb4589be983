#include "CSecretShims.h"
#include <libsecret/secret.h>
#include <string.h>

/* One item per local copy of a vault: attributes vault=<vault id>, copy=<local copy id>. */
static const SecretSchema *vault_schema(void) {
    static const SecretSchema schema = {
        "org.vault.LocalSession", SECRET_SCHEMA_NONE,
        {
            { "vault", SECRET_SCHEMA_ATTRIBUTE_STRING },
            { "copy", SECRET_SCHEMA_ATTRIBUTE_STRING },
            { NULL, 0 },
        }
    };
    return &schema;
}

/* Before one item per local copy: one per vault id (attribute vault only), shared by every copy. */
static const SecretSchema *legacy_schema(void) {
    static const SecretSchema schema = {
        "org.vault.Session", SECRET_SCHEMA_NONE,
        {
            { "vault", SECRET_SCHEMA_ATTRIBUTE_STRING },
            { NULL, 0 },
        }
    };
    return &schema;
}

static void take_error(GError *e, char **err) {
    if (err) *err = e ? g_strdup(e->message) : g_strdup("unknown keyring error");
    if (e) g_error_free(e);
}

int CSecretShims_store(const char *vault_id, const char *copy_id, const char *label, const char *secret, char **err) {
    GError *e = NULL;
    gboolean ok = secret_password_store_sync(vault_schema(), SECRET_COLLECTION_SESSION, label, secret,
                                             NULL, &e, "vault", vault_id, "copy", copy_id, NULL);
    if (!ok) { take_error(e, err); return -1; }
    return 0;
}

int CSecretShims_lookup(const char *vault_id, const char *copy_id, char **out, char **err) {
    GError *e = NULL;
    gchar *pw = secret_password_lookup_sync(vault_schema(), NULL, &e, "vault", vault_id, "copy", copy_id, NULL);
    if (e) { take_error(e, err); return -1; }
    if (!pw) return 1;
    *out = strdup(pw);
    secret_password_free(pw);
    return 0;
}

int CSecretShims_clear(const char *vault_id, const char *copy_id, char **err) {
    GError *e = NULL;
    gboolean removed = secret_password_clear_sync(vault_schema(), NULL, &e, "vault", vault_id, "copy", copy_id, NULL);
    if (e) { take_error(e, err); return -1; }
    return removed ? 0 : 1;
}

int CSecretShims_clear_legacy(const char *vault_id, char **err) {
    GError *e = NULL;
    gboolean removed = secret_password_clear_sync(legacy_schema(), NULL, &e, "vault", vault_id, NULL);
    if (e) { take_error(e, err); return -1; }
    return removed ? 0 : 1;
}

int CSecretShims_clear_all(char **err) {
    GError *e = NULL;
    /* No attribute but the schema's own (xdg:schema): every item of either schema. */
    gboolean removed = secret_password_clear_sync(vault_schema(), NULL, &e, NULL);
    if (e) { take_error(e, err); return -1; }
    gboolean legacy = secret_password_clear_sync(legacy_schema(), NULL, &e, NULL);
    if (e) { take_error(e, err); return -1; }
    return removed || legacy ? 0 : 1;
}

void CSecretShims_free(char *p) { g_free(p); }

void CSecretShims_free_secret(char *p) {
    if (!p) return;
    volatile char *v = p;
    size_t n = strlen(p);
    for (size_t i = 0; i < n; i++) v[i] = 0;
    free(p);
}

int CSecretShims_service_available(char **err) {
    GError *e = NULL;
    SecretService *svc = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, NULL, &e);
    if (!svc) { take_error(e, err); return 0; }
    g_object_unref(svc);
    return 1;
}
