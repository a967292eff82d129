/*
 * test_utf8.c - the one UTF-8 validator (daemon/utf8.c): each boundary of The Unicode Standard's
 * table 3-7 on both sides, cut sequences, and the first bad offset of a buffer.
 */
#include "base/utf8.h"
#include "testlib.h"

struct seq_case {
    const char *bytes;
    size_t avail; /* bytes given to utf8_seq_len */
    size_t want;  /* its answer */
};

static const struct seq_case seq_cases[] = {
    {"A", 1, 1},
    {"", 1, 1}, /* NUL is a one-byte sequence */
    {"\x7f", 1, 1},
    {"A", 0, 0},
    {"\x80", 1, 0},             /* stray continuation */
    {"\xbf", 1, 0},             /* stray continuation */
    {"\xc0\x80", 2, 0},         /* C0: overlong NUL */
    {"\xc1\xbf", 2, 0},         /* C1: overlong */
    {"\xc2\x80", 2, 2},         /* U+0080 */
    {"\xdf\xbf", 2, 2},         /* U+07FF */
    {"\xc2\x80", 1, 0},         /* cut */
    {"\xc2\x41", 2, 0},         /* second byte not a continuation */
    {"\xe0\x9f\xbf", 3, 0},     /* overlong U+07FF */
    {"\xe0\xa0\x80", 3, 3},     /* U+0800 */
    {"\xed\x9f\xbf", 3, 3},     /* U+D7FF */
    {"\xed\xa0\x80", 3, 0},     /* U+D800, a surrogate */
    {"\xed\xbf\xbf", 3, 0},     /* U+DFFF, a surrogate */
    {"\xee\x80\x80", 3, 3},     /* U+E000 */
    {"\xef\xbf\xbf", 3, 3},     /* U+FFFF */
    {"\xe2\x82\xac", 2, 0},     /* cut euro sign */
    {"\xe2\x82\x41", 3, 0},     /* third byte not a continuation */
    {"\xf0\x8f\xbf\xbf", 4, 0}, /* overlong U+FFFF */
    {"\xf0\x90\x80\x80", 4, 4}, /* U+10000 */
    {"\xf4\x8f\xbf\xbf", 4, 4}, /* U+10FFFF */
    {"\xf4\x90\x80\x80", 4, 0}, /* U+110000 */
    {"\xf5\x80\x80\x80", 4, 0}, /* F5: past U+10FFFF */
    {"\xff", 1, 0},
    {"\xf0\x9f\x98\x80", 3, 0}, /* cut emoji */
    {"\xf0\x9f\x98", 4, 0},     /* NUL where the fourth byte should be: not read past it */
};

int main(void)
{
    for (size_t i = 0; i < sizeof(seq_cases) / sizeof(seq_cases[0]); i++) {
        const struct seq_case *c = &seq_cases[i];
        size_t got = utf8_seq_len((const unsigned char *)c->bytes, c->avail);

        if (got != c->want)
            fprintf(stderr, "case %zu: ", i);
        CHECK_INT(got, c->want);
    }

    CHECK_INT(utf8_first_bad("", 0), 0);
    CHECK_INT(utf8_first_bad("plain", 5), 5);
    CHECK_INT(utf8_first_bad("caf\xc3\xa9", 5), 5);
    CHECK_INT(utf8_first_bad("caf\xc3", 4), 3);           /* cut at the end */
    CHECK_INT(utf8_first_bad("ab\xed\xa0\x80z", 6), 2);   /* surrogate */
    CHECK_INT(utf8_first_bad("\xe2\x82\xac\x80", 4), 3);  /* stray continuation */
    CHECK_INT(utf8_first_bad("a\0b", 3), 3);              /* NUL is well-formed */
    CHECK_INT(utf8_first_bad("\xf0\x9f\x98\x80!", 5), 5); /* U+1F600 */
    return tl_done();
}
