/* rankmap PMPI library: environment, messages and running the rankmap engine. */
#define _GNU_SOURCE
#include "rankmap_pmpi.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

__thread int rm_in_fortran = 0;

const char *rm_env(const char *name)
{
    const char *v = getenv(name);
    return (v && *v) ? v : NULL;
}

int rm_yes_no(const char *v)
{
    static const char *yes[] = {"1", "yes", "true", "on"}, *no[] = {"0", "no", "false", "off"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0) return 1;
        if (strcasecmp(v, no[i]) == 0) return 0;
    }
    return -1;
}

int rm_verbose(void)
{
    /* read once: an unknown value is said once (by the first process that asks: rank 0 of a
     * communicator) and read as off */
    static int state = -1;
    if (state >= 0) return state;
    const char *v = rm_env("RANKMAP_VERBOSE");
    int on = v ? rm_yes_no(v) : 0;
    if (on < 0) {
        char *end;
        long level = strtol(v, &end, 10);
        on = *end || end == v || level < 0 ? -1 : level > 0;   /* a level: 2 is on */
    }
    if (on < 0)
        rm_log("RANKMAP_VERBOSE='%s' is not 0 or 1: no verbose lines", v);
    state = on > 0;
    return state;
}

void rm_log(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (char *c = line; *c; c++)  /* one line, whatever the message holds */
        if (*c == '\n' || *c == '\r') *c = ' ';
    fprintf(stderr, "rankmap: %s\n", line);
    fflush(stderr);
}

/* The child's environment: ours without this library in LD_PRELOAD (the engine is a Python
 * program, it must not load an MPI profiling library). */
static char **child_environment(void)
{
    size_t n = 0;
    while (environ[n]) n++;
    char **env = calloc(n + 1, sizeof *env);
    if (!env) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (strncmp(environ[i], "LD_PRELOAD=", 11) == 0) {
            const char *list = environ[i] + 11;
            size_t len = strlen(list);
            char *out = malloc(len + 12);
            if (!out) continue;
            strcpy(out, "LD_PRELOAD=");
            char *copy = strdup(list);
            if (!copy) { free(out); continue; }
            char *save = NULL;
            int any = 0;
            for (char *tok = strtok_r(copy, ": ", &save); tok; tok = strtok_r(NULL, ": ", &save)) {
                if (strstr(tok, "librankmap_pmpi")) continue;
                if (any) strcat(out, ":");
                strcat(out, tok);
                any = 1;
            }
            free(copy);
            if (any) env[k++] = out; else free(out);
            continue;
        }
        env[k++] = environ[i];
    }
    env[k] = NULL;
    return env;
}

static int run_child(char *const argv[], double timeout_s, const char *err_path);

/* A program that ignores SIGCHLD has its children reaped by the kernel, and waitpid fails
 * with ECHILD: the engine's status is kept for the library by the default disposition while
 * it runs, then the program's is restored. */
int rm_run(char *const argv[], double timeout_s, const char *err_path)
{
    struct sigaction dfl, old;
    int restore = 0;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    if (sigaction(SIGCHLD, NULL, &old) == 0 && old.sa_handler == SIG_IGN &&
        !(old.sa_flags & SA_SIGINFO))
        restore = sigaction(SIGCHLD, &dfl, NULL) == 0;
    int rc = run_child(argv, timeout_s, err_path);
    if (restore) sigaction(SIGCHLD, &old, NULL);
    return rc;
}

static int run_child(char *const argv[], double timeout_s, const char *err_path)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    pid_t pid;
    char **env = child_environment();
    if (!env) return -1;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawnattr_init(&attr);
    /* its own process group, so a timeout kills everything it started */
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    /* free the strings we allocated (the rewritten LD_PRELOAD) */
    for (char **e = env; *e; e++) {
        int ours = 1;
        for (char **o = environ; *o; o++)
            if (*o == *e) { ours = 0; break; }
        if (ours) free(*e);
    }
    free(env);
    if (rc != 0) return -1;
    struct timespec t0, now, nap = {0, 2000000};  /* poll every 2 ms */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int status;
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            if (WIFEXITED(status)) return WEXITSTATUS(status);
            return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        }
        /* ECHILD: a SIGCHLD handler of the program reaped it; it has exited, its status
         * is lost: the caller judges by the result file */
        if (w < 0 && errno == ECHILD) return -3;
        if (w < 0 && errno != EINTR) return -1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double el = (now.tv_sec - t0.tv_sec) + 1e-9 * (now.tv_nsec - t0.tv_nsec);
        if (el >= timeout_s) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            return -2;
        }
        nanosleep(&nap, NULL);
    }
}

void rm_last_line(const char *path, char *out, size_t n)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' '))
            line[--len] = '\0';
        if (len) snprintf(out, n, "%s", line);
    }
    fclose(f);
}
