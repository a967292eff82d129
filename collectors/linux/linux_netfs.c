/*
 * linux_netfs.c - the cifs client's Stats and the NFS client's mountstats; see linux_netfs.h.
 */
#include "collectors/linux/linux_netfs.h"

#include "collectors/linux/linux_scan.h"

#include <errno.h>
#include <string.h>

/* The row named [name, name + len) (cut as raw_object_add cuts it), or NULL. */
static struct raw_row *find_row(struct raw_object *o, const char *name, size_t len)
{
    size_t n = len < COUNTER_NAME_MAX - 1 ? len : COUNTER_NAME_MAX - 1;

    for (size_t i = 0; i < o->n; i++)
        if (strncmp(o->rows[i].name, name, n) == 0 && o->rows[i].name[n] == '\0')
            return &o->rows[i];
    return NULL;
}

/* p + strlen(prefix) when [p, eol) starts with prefix, else NULL. */
static const char *after(const char *p, const char *eol, const char *prefix)
{
    size_t n = strlen(prefix);

    return (size_t)(eol - p) >= n && memcmp(p, prefix, n) == 0 ? p + n : NULL;
}

/*
 * A number printed with %d from an atomic_t, as the 32 bits it holds: "-2147483648" is
 * 2147483648. Values up to UINT32_MAX are taken as they are. Returns what scan_u64 returns.
 */
static const char *scan_i32(const char *p, const char *end, uint64_t *out)
{
    int neg = p < end && *p == '-';
    uint64_t v;

    p = scan_u64(p + neg, end, &v);
    if (!p || v > (neg ? UINT64_C(0x80000000) : UINT64_C(0xffffffff)))
        return NULL;
    *out = neg ? (uint64_t)(uint32_t)(0u - (uint32_t)v) : v;
    return p;
}

/* Add v to field f of a row (two tree connections of one share add up). */
static void add_field(struct raw_row *r, int f, uint64_t v, int wrap32)
{
    r->v[f] += v;
    if (wrap32)
        r->v[f] &= 0xffffffffu;
    r->present |= 1ull << f;
}

/* "Reads: N ..." or "Writes: N ...": N, then "Bytes: B" (SMB1) or "total F failed" (SMB2).
 * Returns 0, or -EINVAL for a malformed number. */
static int cifs_ops_line(const char *p, const char *eol, struct raw_row *r, int reqs, int bytes)
{
    uint64_t n, b;

    p = scan_i32(scan_blanks(p, eol), eol, &n);
    if (!p)
        return -EINVAL;
    p = scan_blanks(p, eol);
    if ((p = after(p, eol, "Bytes:")) != NULL) {
        if (!scan_u64(scan_blanks(p, eol), eol, &b))
            return -EINVAL;
        add_field(r, bytes, b, 0);
    }
    add_field(r, reqs, n, 1);
    return 0;
}

/* One line inside a share's block. Returns 0 (read or not ours) or -EINVAL (malformed). */
static int cifs_share_line(const char *p, const char *eol, struct raw_row *r)
{
    const char *q;
    uint64_t rd, wr;

    if ((q = after(p, eol, "Reads:")) != NULL)
        return cifs_ops_line(q, eol, r, SMB_RD_REQS, SMB_RD_BYTES);
    if ((q = after(p, eol, "Writes:")) != NULL)
        return cifs_ops_line(q, eol, r, SMB_WR_REQS, SMB_WR_BYTES);
    if ((q = after(p, eol, "Bytes read:")) == NULL)
        return 0;
    q = scan_u64(scan_blanks(q, eol), eol, &rd);
    if (!q || !(q = after(scan_blanks(q, eol), eol, "Bytes written:")) ||
        !scan_u64(scan_blanks(q, eol), eol, &wr))
        return -EINVAL;
    add_field(r, SMB_RD_BYTES, rd, 0);
    add_field(r, SMB_WR_BYTES, wr, 0);
    return 0;
}

/* A share's first line "N) NAME[\tDISCONNECTED ]": 1 and the name, or 0 for any other line. */
static int cifs_share_name(const char *p, const char *eol, const char **name, size_t *len)
{
    const char *q = p, *stop;

    while (q < eol && (unsigned char)(*q - '0') <= 9)
        q++;
    if (q == p || eol - q < 2 || q[0] != ')' || q[1] != ' ')
        return 0;
    q += 2;
    stop = memchr(q, '\t', (size_t)(eol - q));
    if (!stop)
        stop = eol;
    while (stop > q && scan_is_blank(stop[-1]))
        stop--;
    *name = q;
    *len = (size_t)(stop - q);
    return 1;
}

int netfs_parse_cifs_stats(const char *buf, size_t len, struct raw_object *out,
                           struct linux_parse_status *st)
{
    const char *p = buf, *end = buf + len;
    struct raw_row *cur = NULL;
    size_t lineno = 0;
    int shares = 0;

    while (p < end) {
        const char *eol = scan_eol(p, end), *name;
        size_t nlen;

        lineno++;
        if (cifs_share_name(p, eol, &name, &nlen)) {
            cur = NULL;
            if (nlen == 0 || memchr(name, '\0', nlen)) {
                scan_bad_line(st, lineno);
            } else {
                cur = find_row(out, name, nlen);
                if (!cur && !(cur = raw_object_add(out, name, nlen)))
                    return -ENOMEM;
                cur->flags |= RAW_IN_TOTAL;
                shares++;
            }
        } else if (cur && cifs_share_line(p, eol, cur) < 0) {
            scan_bad_line(st, lineno);
        }
        p = scan_next_line(eol, end);
    }
    return shares;
}

/* The next space-separated token of a "device" line: [*tok, return value). */
static const char *word(const char *p, const char *eol, const char **tok)
{
    *tok = scan_blanks(p, eol);
    return scan_token(*tok, eol);
}

static int word_is(const char *tok, const char *stop, const char *s)
{
    return (size_t)(stop - tok) == strlen(s) && memcmp(tok, s, (size_t)(stop - tok)) == 0;
}

/*
 * "device DEV mounted on DIR with fstype TYPE ..." (fs/proc_namespace.c show_vfsstat()): the
 * device and whether TYPE is nfs or nfs4. Returns 1 (NFS), 0 (another file system) or -EINVAL.
 */
static int nfs_device_line(const char *p, const char *eol, const char **dev, size_t *dev_len)
{
    static const char *const words[] = {"mounted", "on", NULL, "with", "fstype"};
    const char *tok, *stop;

    stop = word(p + strlen("device"), eol, &tok);
    if (tok == stop || memchr(tok, '\0', (size_t)(stop - tok)))
        return -EINVAL;
    *dev = tok;
    *dev_len = (size_t)(stop - tok);
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        stop = word(stop, eol, &tok);
        if (tok == stop || (words[i] && !word_is(tok, stop, words[i])))
            return -EINVAL;
    }
    stop = word(stop, eol, &tok);
    if (tok == stop)
        return -EINVAL;
    return word_is(tok, stop, "nfs") || word_is(tok, stop, "nfs4");
}

/* "bytes: normalread normalwrite directread directwrite serverread serverwrite [readpages
 * writepages]". Returns 0 or -EINVAL (fewer than six numbers). */
static int nfs_bytes_line(const char *p, const char *eol, struct raw_row *r)
{
    uint64_t v[6];

    for (int i = 0; i < 6; i++)
        if (!(p = scan_u64(scan_blanks(p, eol), eol, &v[i])))
            return -EINVAL;
    r->v[NFS_APP_RD_BYTES] = v[0] + v[2];
    r->v[NFS_APP_WR_BYTES] = v[1] + v[3];
    r->v[NFS_RD_BYTES] = v[4];
    r->v[NFS_WR_BYTES] = v[5];
    r->present |= 1ull << NFS_APP_RD_BYTES | 1ull << NFS_APP_WR_BYTES | 1ull << NFS_RD_BYTES |
                  1ull << NFS_WR_BYTES;
    return 0;
}

/* "NAME: ops trans timeouts bytes_sent bytes_recv queue_ms rtt_ms execute_ms [errors]": adds
 * ops, rtt and execute. Returns 0 (added, or not an operation's line) or -EINVAL. */
static int nfs_op_line(const char *p, const char *eol, struct raw_row *r)
{
    const char *stop = scan_token(p, eol);
    uint64_t v[8];

    if (stop == p || stop[-1] != ':')
        return 0;
    for (int i = 0; i < 8; i++)
        if (!(stop = scan_u64(scan_blanks(stop, eol), eol, &v[i])))
            return -EINVAL;
    r->v[NFS_OPS] += v[0];
    r->v[NFS_RTT_MS] += v[6];
    r->v[NFS_EXE_MS] += v[7];
    return 0;
}

/* One indented line of an NFS mount's block; *in_ops is set by "per-op statistics". */
static int nfs_stats_line(const char *p, const char *eol, struct raw_row *r, int *in_ops)
{
    const char *q;

    p = scan_blanks(p, eol);
    if (*in_ops)
        return nfs_op_line(p, eol, r);
    if ((q = after(p, eol, "bytes:")) != NULL)
        return nfs_bytes_line(q, eol, r);
    if (after(p, eol, "per-op statistics")) {
        *in_ops = 1;
        r->v[NFS_OPS] = r->v[NFS_RTT_MS] = r->v[NFS_EXE_MS] = 0;
        r->present |= 1ull << NFS_OPS | 1ull << NFS_RTT_MS | 1ull << NFS_EXE_MS;
    }
    return 0;
}

int netfs_parse_mountstats(const char *buf, size_t len, struct raw_object *out,
                           struct linux_parse_status *st)
{
    const char *p = buf, *end = buf + len;
    struct raw_row *cur = NULL;
    size_t lineno = 0;
    int mounts = 0, in_ops = 0;

    while (p < end) {
        const char *eol = scan_eol(p, end), *dev;
        size_t dev_len;
        int rc = 0;

        lineno++;
        if (after(p, eol, "device ")) {
            cur = NULL;
            in_ops = 0;
            rc = nfs_device_line(p, eol, &dev, &dev_len);
            if (rc > 0) {
                mounts++;
                if (!find_row(out, dev, dev_len)) { /* else a bind mount: counted once */
                    if (!(cur = raw_object_add(out, dev, dev_len)))
                        return -ENOMEM;
                    cur->flags |= RAW_IN_TOTAL;
                }
            }
        } else if (cur) {
            rc = nfs_stats_line(p, eol, cur, &in_ops);
        }
        if (rc < 0)
            scan_bad_line(st, lineno);
        p = scan_next_line(eol, end);
    }
    return mounts;
}
