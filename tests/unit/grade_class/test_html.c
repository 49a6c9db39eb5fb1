/* Unit tests for grade-class's class.html: a hostile student name is
 * escaped as text and percent-encoded in its link, a link appears only
 * where the student's page exists, the commonest failing feedback is
 * shown, and the histogram's axis counts whole students. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "html.h"
#include "rl_err.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void class_page_escapes_links_and_counts(void **state)
{
    (void)state;
    char dir[] = "/tmp/gc-html-XXXXXX";
    assert_non_null(mkdtemp(dir));
    static gc_exercise ex[1];
    memset(ex, 0, sizeof ex);
    strcpy(ex[0].name, "deadline");
    ex[0].nscenarios = 1;
    strcpy(ex[0].scenarios[0], "shrinks");
    ex[0].points[0] = 4;
    gc_tally t;
    gc_tally_init(&t, ex, 1);
    static char evil[] = "<b>x<i> & y's", amy[] = "amy", bob[] = "bob";
    gc_tally_add_all(&t, evil, 0, "FAIL", "Work received 2000 ms <forwarded>");
    gc_tally_add_all(&t, "amy", 0, "FAIL", "Work received 2000 ms <forwarded>");
    gc_tally_add_all(&t, "bob", 0, "MISSING", "no folder");
    /* Pages for the first two only. */
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, evil);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/%s/deadline.html", dir, evil);
    fclose(fopen(path, "w"));
    snprintf(path, sizeof path, "%s/amy", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/amy/deadline.html", dir);
    fclose(fopen(path, "w"));
    char *students[] = {evil, amy, bob};
    snprintf(path, sizeof path, "%s/class.html", dir);
    assert_int_equal(gc_html_write_class(&t, students, 3, path), RL_OK);
    const char *page = slurp(path);
    assert_null(strstr(page, "<b>x"));
    assert_non_null(strstr(page, "&lt;b&gt;x&lt;i&gt; &amp; y&#39;s"));
    assert_non_null(strstr(page, "href=\"%3Cb%3Ex%3Ci%3E%20%26%20y%27s/deadline.html\""));
    assert_non_null(strstr(page, "href=\"amy/deadline.html\""));
    assert_null(strstr(page, "href=\"bob/"));
    assert_non_null(strstr(page, "deadline (no page)"));
    assert_non_null(strstr(page, "3&#215;</span> Work received 2000 ms &lt;forwarded&gt;") ||
                    strstr(page, "2&#215;</span> Work received 2000 ms &lt;forwarded&gt;"));
    /* Three students in the lowest bin: the axis ends at 3, in whole steps. */
    assert_non_null(strstr(page, "text-anchor=\"end\">3<"));
    assert_null(strstr(page, ">0.5<"));
    gc_tally_fini(&t);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(class_page_escapes_links_and_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
