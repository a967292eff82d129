/*
 * pdh_util.c - PDH helpers shared by the two halves of the Windows collector; see pdh_util.h.
 */
#include "collectors/windows/pdh_util.h"

#include "base/log.h"
#include "collectors/windows/pdh_map.h"

#include <pdhmsg.h>
#include <stdio.h>
#include <stdlib.h>

void pdh_util_utf8(const WCHAR *w, char *out, size_t cap)
{
    if (WideCharToMultiByte(CP_UTF8, 0, w, -1, out, (int)cap, NULL, NULL) <= 0)
        out[0] = '\0';
}

int pdh_util_wide(const char *s, WCHAR *out, size_t cap)
{
    return MultiByteToWideChar(CP_UTF8, 0, s, -1, out, (int)cap) > 0 ? 0 : -1;
}

void pdh_util_status_text(PDH_STATUS st, char *out, size_t cap)
{
    const char *t = pdh_map_status_text((uint32_t)st);

    if (t)
        snprintf(out, cap, "%s, 0x%08lX", t, (unsigned long)st);
    else
        snprintf(out, cap, "PDH status 0x%08lX", (unsigned long)st);
}

void pdh_util_note_path(struct path_state *ps, const char *path, PDH_STATUS st)
{
    char why[96];

    ps->rejected = st != ERROR_SUCCESS;
    if (ps->rejected && !ps->reported) {
        pdh_util_status_text(st, why, sizeof(why));
        log_warnx("PDH: counter %s is not available (%s); it is not recorded, the other "
                  "counters are",
                  path, why);
        ps->reported = 1;
    } else if (!ps->rejected && ps->reported) {
        log_info("PDH: counter %s is available again", path);
        ps->reported = 0;
    }
}

WCHAR *pdh_util_localized(PDH_HQUERY query, const WCHAR *path, PDH_STATUS *st)
{
    PDH_HCOUNTER probe;
    PDH_COUNTER_INFO_W *info = NULL;
    DWORD size = 0;
    WCHAR *out = NULL;

    *st = PdhAddEnglishCounterW(query, path, 0, &probe);
    if (*st != ERROR_SUCCESS)
        return NULL;
    if ((DWORD)PdhGetCounterInfoW(probe, FALSE, &size, NULL) == PDH_MORE_DATA && size &&
        (info = malloc(size)) && PdhGetCounterInfoW(probe, FALSE, &size, info) == 0 &&
        info->szFullPath)
        out = _wcsdup(info->szFullPath);
    free(info);
    PdhRemoveCounter(probe);
    if (!out)
        *st = PDH_CSTATUS_BAD_COUNTERNAME;
    return out;
}

WCHAR *pdh_util_expand(const WCHAR *path, PDH_STATUS *st)
{
    DWORD len = 0;
    WCHAR *list;

    *st = PdhExpandWildCardPathW(NULL, path, NULL, &len, 0);
    if ((DWORD)*st != PDH_MORE_DATA && *st != ERROR_SUCCESS)
        return NULL;
    if (!len || !(list = calloc((size_t)len + 2, sizeof(WCHAR)))) {
        *st = PDH_NO_DATA;
        return NULL;
    }
    *st = PdhExpandWildCardPathW(NULL, path, list, &len, 0);
    if (*st != ERROR_SUCCESS) {
        free(list);
        return NULL;
    }
    return list;
}
