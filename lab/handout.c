/* handout: listing and showing the handouts in lab/exercises; see handout.h. */
#include "handout.h"
#include "status.h"

#include "rl_err.h"
#include "rl_path.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The handouts' folder into |dir|. Returns RL_OK, or RL_ENOTFOUND after a
 * message. */
static int find_dir(char *dir, size_t len)
{
    if (rl_path_find_data("lab/exercises", dir, len) == 0)
        return RL_OK;
    fprintf(stderr, "lab: cannot find lab/exercises next to the lab program; set RELAYLAB_HOME to the "
                    "relaylab checkout\n");
    return RL_ENOTFOUND;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_handout(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 3 && strcmp(d->d_name + n - 3, ".md") == 0;
}

/* The first "# " heading of |path|, without the marker, into |out|. */
static void title_of(const char *path, char *out, size_t len)
{
    snprintf(out, len, "(no title)");
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "# ", 2) == 0) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(out, len, "%.*s", (int)(len - 1), line + 2);
            break;
        }
    }
    fclose(f);
}

int lab_handout_list(void)
{
    char dir[PATH_MAX];
    if (find_dir(dir, sizeof dir))
        return LAB_EXIT_FAILED;
    struct dirent **names;
    int n = scandir(dir, &names, is_handout, by_name);
    if (n < 0) {
        perror(dir);
        return LAB_EXIT_FAILED;
    }
    printf("Exercises (lab show NAME for the handout, bin/grader NAME to be graded):\n");
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX + 256], title[256], name[256];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        snprintf(name, sizeof name, "%.*s", (int)strlen(names[i]->d_name) - 3, names[i]->d_name);
        title_of(path, title, sizeof title);
        printf("  %-10s %s\n", name, title);
        free(names[i]);
    }
    free(names);
    return LAB_EXIT_OK;
}

int lab_handout_show(const char *name)
{
    char dir[PATH_MAX];
    if (find_dir(dir, sizeof dir))
        return LAB_EXIT_FAILED;
    if (strchr(name, '/') || strlen(name) > 64) {
        fprintf(stderr, "lab: '%s' is not an exercise name\n", name);
        return LAB_EXIT_USAGE;
    }
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/%s.md", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "lab: no exercise named '%s'.\n", name);
        lab_handout_list();
        return LAB_EXIT_USAGE;
    }
    /* Passages only the instructor's kit can back (its reference programs,
     * known submissions, benches) are marked; the student kit leaves them
     * out (scripts/student-kit.sh), and here the marks are not printed. */
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        if (strcmp(line, LAB_INSTRUCTOR_OPEN "\n") == 0 || strcmp(line, LAB_INSTRUCTOR_CLOSE "\n") == 0)
            continue;
        for (char *p = line; *p;) {
            size_t skip =
                strncmp(p, LAB_INSTRUCTOR_OPEN, strlen(LAB_INSTRUCTOR_OPEN)) == 0     ? strlen(LAB_INSTRUCTOR_OPEN)
                : strncmp(p, LAB_INSTRUCTOR_CLOSE, strlen(LAB_INSTRUCTOR_CLOSE)) == 0 ? strlen(LAB_INSTRUCTOR_CLOSE)
                                                                                      : 0;
            if (skip)
                p += skip;
            else
                fputc(*p++, stdout);
        }
    }
    fclose(f);
    return LAB_EXIT_OK;
}
