/*
 * rt_manifest.c — the manifest.json of a cache entry: printing and strict parsing.
 *
 *   {"format": "tritium-cache/1", "key": "<key>",
 *    "files": [{"name": "add.so", "role": "kernel", "size": 16384,
 *               "xxh64": "9f0c1b2a3d4e5f60"}, ...]}
 *
 * The parser treats the text as hostile (it may be truncated or garbage): anything not
 * exactly of this shape is rejected with a reason, never trusted.
 */
#include "rt_int.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ORDER RtFileRole */
static const char *const role_names[RT_FILE_ROLE_COUNT] = {"data", "kernel", "metadata"};

const char *
rt_role_name(RtFileRole role)
{
    return (unsigned)role < RT_FILE_ROLE_COUNT ? role_names[role] : "?";
}

/* Maps a role name back to its enum; -1 for anything unknown. */
static int
role_parse(const char *s, RtFileRole *out)
{
    for (int i = 0; i < RT_FILE_ROLE_COUNT; i++)
        if (strcmp(s, role_names[i]) == 0)
            return *out = (RtFileRole)i, 0;
    return -1;
}

/* Returns the manifest text (caller owns it; free()). Checksums are written as 16 hex
 * digits rather than numbers: JSON numbers are doubles and would round 64-bit values. */
char *
rt_manifest_print(const RtManifest *m, const char *key)
{
    cJSON *root = cJSON_CreateObject(), *files = cJSON_CreateArray();
    char hex[17];
    char *text;

    if (!root || !files)
        abort(); /* cJSON only fails on out-of-memory */
    cJSON_AddStringToObject(root, "format", RT_MANIFEST_FORMAT);
    cJSON_AddStringToObject(root, "key", key);
    cJSON_AddItemToObject(root, "files", files);
    for (size_t i = 0; i < m->nfiles; i++) {
        const RtManFile *f = &m->files[i];
        cJSON *o = cJSON_CreateObject();
        snprintf(hex, sizeof hex, "%016" PRIx64, f->hash);
        cJSON_AddStringToObject(o, "name", f->name);
        cJSON_AddStringToObject(o, "role", rt_role_name(f->role));
        /* sizes are exact in a double up to 2^53 bytes */
        cJSON_AddNumberToObject(o, "size", (double)f->size);
        cJSON_AddStringToObject(o, "xxh64", hex);
        cJSON_AddItemToArray(files, o);
    }
    text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        abort();
    return text;
}

/* Formats "msg arg" into 'why' and returns -1, the parser's failure value. */
static int
bad(char *why, size_t whylen, const char *msg, const char *arg)
{
    snprintf(why, whylen, "%s%s%s", msg, arg ? " " : "", arg ? arg : "");
    return -1;
}

/* Parses one element of "files" into f; returns 0 or -1 with the reason in 'why'. */
static int
parse_file(const cJSON *o, RtManFile *f, char *why, size_t whylen)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(o, "role");
    const cJSON *size = cJSON_GetObjectItemCaseSensitive(o, "size");
    const cJSON *hash = cJSON_GetObjectItemCaseSensitive(o, "xxh64");
    char *end;

    if (!cJSON_IsString(name) || !cJSON_IsString(role) || !cJSON_IsNumber(size) ||
        !cJSON_IsString(hash))
        return bad(why, whylen, "file entry lacks name/role/size/xxh64", NULL);
    /* names become paths under the entry: "../x" or "/etc/x" must never get through */
    if (!rt_name_ok(name->valuestring) || strcmp(name->valuestring, RT_MANIFEST_NAME) == 0)
        return bad(why, whylen, "unsafe file name", name->valuestring);
    if (role_parse(role->valuestring, &f->role) != 0)
        return bad(why, whylen, "unknown role", role->valuestring);
    if (!(size->valuedouble >= 0 && size->valuedouble <= 9007199254740992.0) ||
        size->valuedouble != (double)(uint64_t)size->valuedouble)
        return bad(why, whylen, "bad size for", name->valuestring);
    if (strlen(hash->valuestring) != 16)
        return bad(why, whylen, "bad checksum for", name->valuestring);
    f->hash = strtoull(hash->valuestring, &end, 16);
    if (*end)
        return bad(why, whylen, "bad checksum for", name->valuestring);
    f->size = (uint64_t)size->valuedouble;
    f->name = rt_xstrdup(name->valuestring);
    return 0;
}

/* Checks the format tag, and that the manifest was written for this key (an entry
 * directory copied or renamed by hand must not serve another specialisation). */
static int
check_header(const cJSON *root, const char *key, char *why, size_t whylen)
{
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(root, "key");

    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, RT_MANIFEST_FORMAT) != 0)
        return bad(why, whylen, "not a " RT_MANIFEST_FORMAT " manifest", NULL);
    if (!cJSON_IsString(k) || strcmp(k->valuestring, key) != 0)
        return bad(why, whylen, "manifest is for another key:",
                   cJSON_IsString(k) ? k->valuestring : "(none)");
    return 0;
}

/* Rejects duplicate names and a second KERNEL or METADATA file (O(n^2): entries hold a
 * handful of files). */
static int
check_unique(const RtManifest *m, char *why, size_t whylen)
{
    int seen[RT_FILE_ROLE_COUNT] = {0};

    for (size_t i = 0; i < m->nfiles; i++) {
        if (m->files[i].role != RT_FILE_DATA && seen[m->files[i].role]++)
            return bad(why, whylen, "two files with role", rt_role_name(m->files[i].role));
        for (size_t j = 0; j < i; j++)
            if (strcmp(m->files[i].name, m->files[j].name) == 0)
                return bad(why, whylen, "file listed twice:", m->files[i].name);
    }
    return 0;
}

/* Parses manifest text (not necessarily NUL-terminated) written for 'key' into *m
 * (caller storage; release with rt_manifest_fini). Returns 0, or -1 with a reason in
 * 'why' and *m empty. */
int
rt_manifest_parse(RtManifest *m, const char *text, size_t len, const char *key, char *why,
                  size_t whylen)
{
    cJSON *root = cJSON_ParseWithLength(text, len);
    const cJSON *files, *o;
    int rc = -1;

    memset(m, 0, sizeof *m);
    if (!root) {
        bad(why, whylen, "manifest is not valid JSON", NULL);
        goto out;
    }
    if (check_header(root, key, why, whylen) != 0)
        goto out;
    files = cJSON_GetObjectItemCaseSensitive(root, "files");
    if (!cJSON_IsArray(files)) {
        bad(why, whylen, "manifest has no file list", NULL);
        goto out;
    }
    m->files = rt_xcalloc((size_t)cJSON_GetArraySize(files), sizeof *m->files);
    cJSON_ArrayForEach(o, files) {
        if (parse_file(o, &m->files[m->nfiles], why, whylen) != 0)
            goto out;
        m->nfiles++;
    }
    rc = check_unique(m, why, whylen);
out:
    cJSON_Delete(root);
    if (rc != 0)
        rt_manifest_fini(m);
    return rc;
}

/* Frees the file list; *m is left empty and may be reused. */
void
rt_manifest_fini(RtManifest *m)
{
    for (size_t i = 0; i < m->nfiles; i++)
        free(m->files[i].name);
    free(m->files);
    memset(m, 0, sizeof *m);
}
