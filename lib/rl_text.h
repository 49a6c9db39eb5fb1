/* rl_text: making a submission's words safe to show. Status details, tags,
 * output and file contents come from code the grader does not trust; sent
 * raw to a terminal, an ESC sequence or a CR rewrites what the reader sees
 * (a 2/10 table shown as "score 10/10"), and in a log, CSV or JSON file it
 * waits for whoever prints that file next. Every such string passes through
 * rl_text_printable before it reaches a terminal, a log, the CSV or
 * results.json: printable ASCII stays, everything else is escaped visibly. */
#ifndef RL_TEXT_H
#define RL_TEXT_H

#include <stddef.h>

/* Keep newline and tab as they are (a multi-line block, such as a
 * submission's output); without it they are escaped too (one line). */
#define RL_TEXT_MULTILINE 1u

/* Copies |inlen| bytes at |in| (NUL bytes included) into |out| (|outlen|
 * bytes, NUL-terminated when |outlen| > 0) with printable ASCII (0x20..0x7e)
 * as is and every other byte escaped: \n, \t and \r by those names (\n and \t
 * kept raw with RL_TEXT_MULTILINE), anything else as \xHH (ESC is \x1b; a
 * byte of UTF-8 is escaped too, which also disarms bidirectional overrides).
 * An escape is never cut in half. Returns the length of the whole escaped
 * text, not counting the NUL (as snprintf does), so a result >= |outlen|
 * means it was cut. Applying it again to its own output changes nothing. */
size_t rl_text_printable(char *out, size_t outlen, const char *in, size_t inlen, unsigned flags);

/* The same for the NUL-terminated |s|, into memory the caller frees with
 * free(). Never NULL (aborts on out-of-memory, rl_alloc.h). */
char *rl_text_printable_dup(const char *s, unsigned flags);

/* The same in place for the NUL-terminated |s| in a buffer of |size|
 * bytes, cut to fit when escapes make it longer. Returns the whole escaped
 * length, as rl_text_printable. */
size_t rl_text_printable_inplace(char *s, size_t size, unsigned flags);

#endif
