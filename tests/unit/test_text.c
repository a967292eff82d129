/*
 * test_text.c - base/text.c: the error buffer (terminated, cut to its size, NULL and 0 ignored)
 * and the hex digits.
 */
#include "base/text.h"
#include "testlib.h"

#include <string.h>

int main(void)
{
    char err[8];

    text_set_err(err, sizeof(err), "bad %d", 42);
    CHECK_STR(err, "bad 42");
    text_set_err(err, sizeof(err), "%s", "much too long");
    CHECK_STR(err, "much to"); /* cut, and terminated */
    memcpy(err, "keep", 5);
    text_set_err(err, 0, "x");
    CHECK_STR(err, "keep");
    text_set_err(NULL, 8, "x"); /* no crash */
    CHECK_INT(text_hex_digit('0'), 0);
    CHECK_INT(text_hex_digit('9'), 9);
    CHECK_INT(text_hex_digit('a'), 10);
    CHECK_INT(text_hex_digit('F'), 15);
    CHECK_INT(text_hex_digit('g'), -1);
    CHECK_INT(text_hex_digit('/'), -1);
    CHECK_INT(text_hex_digit(':'), -1);
    CHECK_INT(text_hex_digit('@'), -1);
    CHECK_INT(text_hex_digit('\0'), -1);
    return tl_done();
}
