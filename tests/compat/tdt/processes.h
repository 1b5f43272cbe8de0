/*
 * Helpers of the multi-process C tests (check.h is the assertion harness): the test program
 * starts itself as the other process (fork + exec, a role in argv[1]) and waits for that process's
 * observable state — its exit status, a byte on a pipe, a thread parked in futex — never for time
 * to pass. One translation unit per test program, like check.h.
 */
#ifndef FERRY_TESTS_COMPAT_TDT_PROCESSES_H
#define FERRY_TESTS_COMPAT_TDT_PROCESSES_H

#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static char tag[64];   /* in every channel name: "ferrytest<pid>", to find leftovers in /dev/shm */
static char self[512]; /* this executable, for exec */

/* Starts this program with `role` and up to three arguments (NULL ends the list early). */
static pid_t spawn(const char* role, const char* a, const char* b, const char* c) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        execl(self, self, role, a, b, c, (char*)NULL);
        _exit(127);
    }
    return pid;
}

/* The child's exit status; -1 (and the child killed) when it has not exited within `ms`. */
static int wait_child(pid_t pid, double ms) {
    const double deadline = check_now_ms() + ms;
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (check_now_ms() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        sched_yield();
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
}

/* Reads one byte from `fd` (the child's "I got this far"); 0 on EOF. */
static char wait_byte(int fd) {
    char c = 0;
    while (read(fd, &c, 1) < 0 && errno == EINTR) {
    }
    return c;
}

/* Whether thread `tid` of `pid` is inside a futex wait (/proc/<pid>/task/<tid>/syscall). */
static int in_futex(pid_t pid, pid_t tid) {
    char path[128];
    snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
    FILE* f = fopen(path, "r");
    long number = -1;
    if (f != NULL) {
        if (fscanf(f, "%ld", &number) != 1) {
            number = -1;
        }
        fclose(f);
    }
    return number == SYS_futex;
}

/* Waits until thread `tid` of `pid` is parked in a futex (a blocked receive parks in slices,
 * so it is seen there repeatedly); 0 if that did not happen within 10 s. */
static int wait_parked(pid_t pid, pid_t tid) {
    const double deadline = check_now_ms() + 10000;
    while (!in_futex(pid, tid)) {
        if (check_now_ms() > deadline) {
            return 0;
        }
        sched_yield();
    }
    return 1;
}

/* Segments under /dev/shm whose name holds this run's tag. */
static int leftovers(void) {
    int n = 0;
    DIR* dir = opendir("/dev/shm");
    if (dir == NULL) {
        return 0;
    }
    for (struct dirent* e = readdir(dir); e != NULL; e = readdir(dir)) {
        if (strstr(e->d_name, tag) != NULL) {
            fprintf(stderr, "leftover: /dev/shm/%s\n", e->d_name);
            ++n;
        }
    }
    closedir(dir);
    return n;
}

/* A pipe whose write end the child inherits; returns the read end, `arg` its write end's number. */
static int child_pipe(int* write_end, char* arg, size_t size) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    *write_end = fds[1];
    snprintf(arg, size, "%d", fds[1]);
    return fds[0];
}

#endif
