/* rl_text: escaping a submission's words for terminals, logs and files;
 * see rl_text.h. One function does the work so every path shows the same
 * bytes the same way. */
#include "rl_text.h"

#include "rl_alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes the escaped form of |c| into |esc| (at least 5 bytes); returns its
 * length. */
static size_t escape(unsigned char c, unsigned flags, char *esc)
{
    if ((c >= 0x20 && c < 0x7f) || ((c == '\n' || c == '\t') && (flags & RL_TEXT_MULTILINE))) {
        esc[0] = (char)c;
        return 1;
    }
    if (c == '\n' || c == '\t' || c == '\r') {
        esc[0] = '\\';
        esc[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
        return 2;
    }
    static const char hex[] = "0123456789abcdef";
    esc[0] = '\\';
    esc[1] = 'x';
    esc[2] = hex[c >> 4];
    esc[3] = hex[c & 15];
    return 4;
}

size_t rl_text_printable(char *out, size_t outlen, const char *in, size_t inlen, unsigned flags)
{
    size_t need = 0, o = 0;
    int full = outlen == 0;
    for (size_t i = 0; i < inlen; i++) {
        char esc[5];
        size_t n = escape((unsigned char)in[i], flags, esc);
        if (!full && o + n < outlen) {
            memcpy(out + o, esc, n);
            o += n;
        } else {
            full = 1;
        }
        need += n;
    }
    if (outlen)
        out[o] = '\0';
    return need;
}

char *rl_text_printable_dup(const char *s, unsigned flags)
{
    size_t n = strlen(s);
    size_t need = rl_text_printable(NULL, 0, s, n, flags);
    char *out = rl_xmalloc(need + 1);
    rl_text_printable(out, need + 1, s, n, flags);
    return out;
}

size_t rl_text_printable_inplace(char *s, size_t size, unsigned flags)
{
    if (!size)
        return 0;
    char *copy = rl_xstrdup(s);
    size_t need = rl_text_printable(s, size, copy, strlen(copy), flags);
    free(copy);
    return need;
}
