/*
 * acltdt* channels shared between two processes (FERRY_TDT_SHARED, docs/c-api.md#channels-shared-
 * between-processes). This program is the test (the parent, which asserts) and its own helper:
 * started with a role as argv[1] (fork + exec of /proc/self/exe) it plays the other process and
 * reports through its exit status. The parent waits for the child's observable state — a byte on
 * a pipe, its thread parked in futex — never for time to pass.
 */
#include "acl/acl_base.h"
#include "acl/acl_tdt.h"
#include "check.h"
#include "processes.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { k_values = 256, k_messages = 40 };

/* ---- datasets with a checksum ---- */

/* Message i: k_values floats i * 1000 + k, and their sum last. */
static acltdtDataset* numbered_dataset(float* values, int i) {
    float sum = 0.0f;
    for (int k = 0; k < k_values - 1; ++k) {
        values[k] = (float)(i * 1000 + k);
        sum += values[k];
    }
    values[k_values - 1] = sum;
    const int64_t dims[1] = {k_values};
    acltdtDataItem* item = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 1, ACL_FLOAT, values,
                                                k_values * sizeof(float));
    acltdtDataset* dataset = acltdtCreateDataset();
    REQUIRE(item != NULL && dataset != NULL && acltdtAddDataItem(dataset, item) == ACL_SUCCESS);
    return dataset;
}

static void destroy_numbered(acltdtDataset* dataset) {
    acltdtDestroyDataItem(acltdtGetDataItem(dataset, 0));
    acltdtDestroyDataset(dataset);
}

/* Whether `received` is message i, checksum included. */
static int is_message(const acltdtDataset* received, int i) {
    const acltdtDataItem* item = acltdtGetDataItem(received, 0);
    if (item == NULL || acltdtGetDataSizeFromItem(item) != k_values * sizeof(float)) {
        return 0;
    }
    const float* v = acltdtGetDataAddrFromItem(item);
    float sum = 0.0f;
    for (int k = 0; k < k_values - 1; ++k) {
        if (v[k] != (float)(i * 1000 + k)) {
            return 0;
        }
        sum += v[k];
    }
    return v[k_values - 1] == sum;
}

/* ---- the child's roles: the exit status is the verdict ---- */

static int role_send(const char* name, int capacity, int n) {
    acltdtChannelHandle* h = capacity > 0
                                 ? acltdtCreateChannelWithCapacity(0, name, (size_t)capacity)
                                 : acltdtCreateChannel(0, name);
    if (h == NULL) {
        return 2;
    }
    int result = 0;
    float values[k_values];
    for (int i = 0; i < n && result == 0; ++i) {
        acltdtDataset* dataset = numbered_dataset(values, i);
        result = acltdtSendTensor(h, dataset, capacity > 0 ? 5000 : -1) == ACL_SUCCESS ? 0 : 3;
        destroy_numbered(dataset);
    }
    acltdtDestroyChannel(h); /* the last handle of this process: the receiver drains, then stop */
    return result;
}

/* Opens the channel, says so on `fd`, then blocks in a receive that only a stop can end. */
static int role_receive_block(const char* name, int fd) {
    acltdtChannelHandle* h = acltdtCreateChannelWithCapacity(0, name, 2);
    acltdtDataset* dataset = acltdtCreateDataset();
    if (h == NULL || write(fd, "R", 1) != 1) {
        return 2;
    }
    return acltdtReceiveTensor(h, dataset, -1) == ACL_ERROR_RT_QUEUE_EMPTY ? 0 : 4;
}

/* Opens the channel, says so on `fd`, then waits to be killed. */
static int role_open_wait(const char* name, int fd) {
    if (acltdtCreateChannelWithCapacity(0, name, 2) == NULL || write(fd, "O", 1) != 1) {
        return 2;
    }
    for (;;) {
        pause();
    }
}

/* Without FERRY_TDT_SHARED: its own channel of that name, nothing in /dev/shm. */
static int role_default_send(const char* name) {
    acltdtChannelHandle* h = acltdtCreateChannelWithCapacity(0, name, 2);
    float values[k_values];
    acltdtDataset* dataset = numbered_dataset(values, 0);
    size_t size = 0;
    if (h == NULL || acltdtSendTensor(h, dataset, 0) != ACL_SUCCESS ||
        acltdtQueryChannelSize(h, &size) != ACL_SUCCESS || size != 1) {
        return 5;
    }
    return leftovers() == 0 ? 0 : 6;
}

/* A create that must be refused: NULL, with the reason recorded. */
static int role_refused(const char* name, int capacity) {
    if (acltdtCreateChannelWithCapacity(0, name, (size_t)capacity) != NULL) {
        return 7;
    }
    const char* why = aclGetRecentErrMsg();
    fprintf(stderr, "refused as expected: %s\n", why != NULL ? why : "(none)");
    return why != NULL && strstr(why, "shared channel") != NULL ? 0 : 8;
}

/* One of two processes creating the channel at the same moment: both wait for a start byte,
 * create, report 'C', wait for a go byte, then one sends k_messages and the other receives them
 * (the sender's destroy stops the channel only after both have joined). `spec` is
 * "<sends>:<start fd>:<go fd>:<ready fd>". */
static int role_race(const char* name, const char* spec) {
    int sends = 0;
    int start_fd = -1;
    int go_fd = -1;
    int ready_fd = -1;
    /* An in-process channel first (its name is not listed): the runtime boots now, so that the
     * two creates below start as close together as the start byte allows. */
    acltdtChannelHandle* warm = acltdtCreateChannelWithCapacity(0, "warm-up", 2);
    if (warm == NULL || acltdtDestroyChannel(warm) != ACL_SUCCESS ||
        sscanf(spec, "%d:%d:%d:%d", &sends, &start_fd, &go_fd, &ready_fd) != 4 ||
        wait_byte(start_fd) != 's') {
        return 9;
    }
    acltdtChannelHandle* h = acltdtCreateChannelWithCapacity(0, name, 4);
    if (h == NULL || write(ready_fd, "C", 1) != 1 || wait_byte(go_fd) != 'g') {
        return 10;
    }
    float values[k_values];
    acltdtDataset* received = acltdtCreateDataset();
    int result = 0;
    for (int i = 0; i < k_messages && result == 0; ++i) {
        if (sends) {
            acltdtDataset* dataset = numbered_dataset(values, i);
            result = acltdtSendTensor(h, dataset, 5000) == ACL_SUCCESS ? 0 : 11;
            destroy_numbered(dataset);
        } else {
            const int ok = acltdtReceiveTensor(h, received, 5000) == ACL_SUCCESS;
            result = ok && is_message(received, i) ? 0 : 12;
        }
    }
    acltdtDestroyDataset(received);
    acltdtDestroyChannel(h);
    return result;
}

static int run_role(int argc, char** argv) {
    const char* role = argv[1];
    const char* name = argc > 2 ? argv[2] : "";
    const int number = argc > 3 ? atoi(argv[3]) : 0;
    if (strcmp(role, "send") == 0) {
        return role_send(name, number, argc > 4 ? atoi(argv[4]) : 0);
    }
    if (strcmp(role, "receive-block") == 0) {
        return role_receive_block(name, number);
    }
    if (strcmp(role, "open-wait") == 0) {
        return role_open_wait(name, number);
    }
    if (strcmp(role, "default-send") == 0) {
        snprintf(tag, sizeof tag, "%s", argc > 4 ? argv[4] : "-"); /* the parent's */
        return role_default_send(name);
    }
    if (strcmp(role, "race") == 0) {
        return role_race(name, argc > 3 ? argv[3] : "");
    }
    if (strcmp(role, "refused") == 0) {
        return role_refused(name, number);
    }
    return 100;
}

/* ---- the tests (the parent) ---- */

/* Receives messages 0 .. k_messages - 1, in order, checksums checked. */
static void receive_numbered(acltdtChannelHandle* h, acltdtDataset* received, int32_t timeout) {
    for (int i = 0; i < k_messages; ++i) {
        const aclError got = acltdtReceiveTensor(h, received, timeout);
        CHECK_EQ(got, ACL_SUCCESS);
        CHECK(is_message(received, i));
        if (got != ACL_SUCCESS) {
            break; /* the rest would fail the same way, each after its timeout */
        }
    }
}

/* A name with this run's tag; `extra` goes in the middle. */
static void channel_name(char* out, size_t size, const char* extra) {
    snprintf(out, size, "%s%s", tag, extra);
}

/* The child sends k_messages through a capacity-4 queue channel `name` the parent created (so
 * the child blocks on a full channel, and wakes when the parent takes one); the parent checks
 * each message, then sees the channel stopped by the child's destroy once drained. */
static void exchange_named(const char* name) {
    setenv("FERRY_TDT_SHARED", name, 1);
    acltdtChannelHandle* h = acltdtCreateChannelWithCapacity(0, name, 4);
    REQUIRE(h != NULL);
    char count[16];
    snprintf(count, sizeof count, "%d", k_messages);
    const pid_t pid = spawn("send", name, "4", count);
    acltdtDataset* received = acltdtCreateDataset();
    receive_numbered(h, received, 5000);
    CHECK_EQ(wait_child(pid, 10000), 0);
    /* The child's destroy (its last handle) stopped the channel: drained, a receive answers at
     * once instead of after its timeout. */
    const double start = check_now_ms();
    CHECK_EQ(acltdtReceiveTensor(h, received, 5000), ACL_ERROR_RT_QUEUE_EMPTY);
    CHECK(check_now_ms() - start < 2500.0);
    CHECK_EQ(acltdtDestroyDataset(received), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyChannel(h), ACL_SUCCESS);
    unsetenv("FERRY_TDT_SHARED");
    CHECK_EQ(leftovers(), 0);
}

static void exchange_queue(void) {
    char name[128];
    channel_name(name, sizeof name, " q/x_1"); /* characters a segment name cannot hold */
    exchange_named(name);
}

/* 127 characters mostly outside [A-Za-z0-9-]: too long escaped, so the base64url form. */
static void exchange_long_name(void) {
    char name[128];
    channel_name(name, sizeof name, "");
    const size_t used = strlen(name);
    memset(name + used, '/', 127 - used);
    name[127] = '\0';
    exchange_named(name);
}

/* acltdtCreateChannel: the parent's TF_RECEIVE_<n> and the child's <n> meet. */
static void exchange_process_pairs(void) {
    char base[128];
    char receive_name[160];
    channel_name(base, sizeof base, ".pair");
    snprintf(receive_name, sizeof receive_name, "TF_RECEIVE_%s", base);
    setenv("FERRY_TDT_SHARED", base, 1);
    acltdtChannelHandle* h = acltdtCreateChannel(0, receive_name);
    REQUIRE(h != NULL);
    char count[16];
    snprintf(count, sizeof count, "%d", k_messages);
    const pid_t pid = spawn("send", base, "0", count);
    acltdtDataset* received = acltdtCreateDataset();
    receive_numbered(h, received, -1);
    CHECK_EQ(wait_child(pid, 10000), 0);
    CHECK_EQ(acltdtDestroyDataset(received), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyChannel(h), ACL_SUCCESS);
    unsetenv("FERRY_TDT_SHARED");
    CHECK_EQ(leftovers(), 0);
}

/* Two processes create one channel at the same moment (both released by one write): one creates
 * the segment, the other opens it, and they exchange messages. Two segments would leave the
 * receiver waiting: its receives time out. */
static void creation_race_once(int round) {
    char name[128];
    char extra[32];
    snprintf(extra, sizeof extra, ".race%d", round);
    channel_name(name, sizeof name, extra);
    setenv("FERRY_TDT_SHARED", name, 1);
    int start[2]; /* one pipe per phase: a byte for one phase is never read in another */
    int go[2];
    int ready[2];
    REQUIRE(pipe(start) == 0 && pipe(go) == 0 && pipe(ready) == 0);
    char spec[2][64];
    for (int sends = 0; sends < 2; ++sends) {
        snprintf(spec[sends], sizeof spec[sends], "%d:%d:%d:%d", sends, start[0], go[0], ready[1]);
    }
    const pid_t receiver = spawn("race", name, spec[0], NULL);
    const pid_t sender = spawn("race", name, spec[1], NULL);
    close(start[0]);
    close(go[0]);
    close(ready[1]);
    CHECK_EQ(write(start[1], "ss", 2), 2); /* both create now */
    CHECK_EQ(wait_byte(ready[0]), 'C');
    CHECK_EQ(wait_byte(ready[0]), 'C');
    CHECK_EQ(write(go[1], "gg", 2), 2);
    CHECK_EQ(wait_child(sender, 20000), 0);
    CHECK_EQ(wait_child(receiver, 20000), 0);
    close(start[1]);
    close(go[1]);
    close(ready[0]);
    unsetenv("FERRY_TDT_SHARED");
    CHECK_EQ(leftovers(), 0);
}

/* However the two creates interleave — that is up to the scheduler, so a few rounds — they must
 * end on one channel. (The loser's path, create → "in use" → open, is also taken every time by
 * the child of each test above, whose parent created the channel first.) */
static void creation_race(void) {
    for (int round = 0; round < 3; ++round) {
        creation_race_once(round);
    }
}

static void stop_wakes_the_other_process(void) {
    char name[128];
    char fd_arg[16];
    int write_end = -1;
    channel_name(name, sizeof name, ".stop");
    setenv("FERRY_TDT_SHARED", "*", 1);
    acltdtChannelHandle* h = acltdtCreateChannelWithCapacity(0, name, 2);
    REQUIRE(h != NULL);
    const int read_end = child_pipe(&write_end, fd_arg, sizeof fd_arg);
    const pid_t pid = spawn("receive-block", name, fd_arg, NULL);
    close(write_end);
    CHECK_EQ(wait_byte(read_end), 'R');
    CHECK(wait_parked(pid, pid)); /* its receive is blocked in the shared ring */
    CHECK_EQ(acltdtStopChannel(h), ACL_SUCCESS);
    CHECK_EQ(wait_child(pid, 5000), 0); /* woken: QUEUE_EMPTY; -1 if it stayed blocked */
    close(read_end);
    CHECK_EQ(acltdtDestroyChannel(h), ACL_SUCCESS);
    unsetenv("FERRY_TDT_SHARED");
    CHECK_EQ(leftovers(), 0);
}

struct blocked_receive {
    acltdtChannelHandle* channel;
    acltdtDataset* dataset;
    _Atomic pid_t tid;
    aclError result;
};

static void* receive_forever(void* arg) {
    struct blocked_receive* r = arg;
    r->tid = (pid_t)syscall(SYS_gettid);
    r->result = acltdtReceiveTensor(r->channel, r->dataset, -1);
    return NULL;
}

static void peer_lost_wakes_a_blocked_receive(void) {
    char name[128];
    char fd_arg[16];
    int write_end = -1;
    channel_name(name, sizeof name, ".lost");
    setenv("FERRY_TDT_SHARED", "*", 1);
    struct blocked_receive r = {acltdtCreateChannelWithCapacity(0, name, 2), acltdtCreateDataset(),
                                0, 0};
    REQUIRE(r.channel != NULL);
    const int read_end = child_pipe(&write_end, fd_arg, sizeof fd_arg);
    const pid_t pid = spawn("open-wait", name, fd_arg, NULL);
    close(write_end);
    CHECK_EQ(wait_byte(read_end), 'O');
    pthread_t thread;
    REQUIRE(pthread_create(&thread, NULL, receive_forever, &r) == 0);
    while (r.tid == 0) {
        sched_yield();
    }
    CHECK(wait_parked(getpid(), r.tid));
    const double killed = check_now_ms();
    kill(pid, SIGKILL);
    pthread_join(thread, NULL);
    const double waited = check_now_ms() - killed;
    CHECK_EQ(r.result, ACL_ERROR_FERRY_PEER_LOST);
    CHECK(waited < 100.0);
    fprintf(stderr, "peer lost seen after %.1f ms\n", waited);
    waitpid(pid, NULL, 0);
    close(read_end);
    CHECK_EQ(acltdtDestroyDataset(r.dataset), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyChannel(r.channel), ACL_SUCCESS);
    unsetenv("FERRY_TDT_SHARED");
    CHECK_EQ(leftovers(), 0); /* the dead process's registration does not keep the name */
}

/* No FERRY_TDT_SHARED: each process has its own channel of that name. */
static void default_stays_in_process(void) {
    char name[128];
    channel_name(name, sizeof name, ".default");
    unsetenv("FERRY_TDT_SHARED");
    acltdtChannelHandle* h = acltdtCreateChannelWithCapacity(0, name, 2);
    REQUIRE(h != NULL);
    const pid_t pid = spawn("default-send", name, "0", tag);
    CHECK_EQ(wait_child(pid, 10000), 0); /* it sent one, saw size 1, found nothing in /dev/shm */
    size_t size = 99;
    CHECK_EQ(acltdtQueryChannelSize(h, &size), ACL_SUCCESS);
    CHECK_EQ(size, 0);
    CHECK_EQ(acltdtDestroyChannel(h), ACL_SUCCESS);
}

static void oversize_message_sends_nothing(void) {
    char name[128];
    channel_name(name, sizeof name, ".big");
    setenv("FERRY_TDT_SHARED", "*", 1);
    setenv("FERRY_TDT_SHARED_MESSAGE_BYTES", "4096", 1);
    acltdtChannelHandle* h = acltdtCreateChannelWithCapacity(0, name, 2);
    REQUIRE(h != NULL);
    static float big[2048];
    const int64_t dims[1] = {2048};
    acltdtDataItem* item =
        acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 1, ACL_FLOAT, big, sizeof big);
    acltdtDataset* dataset = acltdtCreateDataset();
    REQUIRE(item != NULL && dataset != NULL && acltdtAddDataItem(dataset, item) == ACL_SUCCESS);
    CHECK_EQ(acltdtSendTensor(h, dataset, 0), ACL_ERROR_INVALID_PARAM);
    CHECK(strstr(aclGetRecentErrMsg(), "FERRY_TDT_SHARED_MESSAGE_BYTES") != NULL);
    size_t size = 99;
    CHECK_EQ(acltdtQueryChannelSize(h, &size), ACL_SUCCESS);
    CHECK_EQ(size, 0);
    float values[k_values]; /* 1 KiB: fits */
    acltdtDataset* small = numbered_dataset(values, 7);
    CHECK_EQ(acltdtSendTensor(h, small, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtQueryChannelSize(h, &size), ACL_SUCCESS);
    CHECK_EQ(size, 1);
    destroy_numbered(small);
    destroy_numbered(dataset);
    CHECK_EQ(acltdtDestroyChannel(h), ACL_SUCCESS);
    setenv("FERRY_TDT_SHARED_MESSAGE_BYTES", "12x", 1); /* not a number: refused, not defaulted */
    CHECK(acltdtCreateChannelWithCapacity(0, name, 2) == NULL);
    CHECK(strstr(aclGetRecentErrMsg(), "FERRY_TDT_SHARED_MESSAGE_BYTES") != NULL);
    unsetenv("FERRY_TDT_SHARED_MESSAGE_BYTES");
    unsetenv("FERRY_TDT_SHARED");
    CHECK_EQ(leftovers(), 0);
}

/* A shared channel keeps the receive's guarantees: a dataset holding the user's items is refused
 * before anything is taken (the message stays queued), and is left as it was. */
static void receive_validates_first(void) {
    char name[128];
    channel_name(name, sizeof name, ".validate");
    setenv("FERRY_TDT_SHARED", "*", 1);
    acltdtChannelHandle* h = acltdtCreateChannelWithCapacity(0, name, 2);
    REQUIRE(h != NULL);
    float values[k_values];
    float mine[k_values];
    acltdtDataset* sent = numbered_dataset(values, 5);
    acltdtDataset* users = numbered_dataset(mine, 9); /* holds an item the user added */
    CHECK_EQ(acltdtSendTensor(h, sent, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtReceiveTensor(h, users, 0), ACL_ERROR_INVALID_PARAM);
    CHECK(is_message(users, 9));
    size_t size = 99;
    CHECK_EQ(acltdtQueryChannelSize(h, &size), ACL_SUCCESS);
    CHECK_EQ(size, 1);
    acltdtDataset* received = acltdtCreateDataset();
    CHECK_EQ(acltdtReceiveTensor(h, received, 0), ACL_SUCCESS);
    CHECK(is_message(received, 5));
    CHECK_EQ(acltdtDestroyDataset(received), ACL_SUCCESS);
    destroy_numbered(users);
    destroy_numbered(sent);
    CHECK_EQ(acltdtDestroyChannel(h), ACL_SUCCESS);
    unsetenv("FERRY_TDT_SHARED");
    CHECK_EQ(leftovers(), 0);
}

/* Names that a careless encoding would merge stay different channels: "_" and its escape, and
 * two names that differ only in their last character in the base64url form. */
static void similar_names_stay_apart(void) {
    char names[4][128];
    channel_name(names[0], sizeof names[0], "_y");
    channel_name(names[1], sizeof names[1], ".5Fy");
    for (int i = 2; i < 4; ++i) {
        channel_name(names[i], sizeof names[i], "");
        const size_t used = strlen(names[i]);
        memset(names[i] + used, ' ', 127 - used);
        names[i][126] = i == 2 ? '!' : '?';
        names[i][127] = '\0';
    }
    setenv("FERRY_TDT_SHARED", "*", 1);
    float values[k_values];
    acltdtDataset* dataset = numbered_dataset(values, 1);
    for (int pair = 0; pair < 4; pair += 2) {
        acltdtChannelHandle* first = acltdtCreateChannelWithCapacity(0, names[pair], 2);
        acltdtChannelHandle* second = acltdtCreateChannelWithCapacity(0, names[pair + 1], 2);
        REQUIRE(first != NULL && second != NULL);
        CHECK_EQ(acltdtSendTensor(first, dataset, 0), ACL_SUCCESS);
        size_t size = 99;
        CHECK_EQ(acltdtQueryChannelSize(second, &size), ACL_SUCCESS);
        CHECK_EQ(size, 0);
        CHECK_EQ(acltdtDestroyChannel(first), ACL_SUCCESS);
        CHECK_EQ(acltdtDestroyChannel(second), ACL_SUCCESS);
    }
    destroy_numbered(dataset);
    unsetenv("FERRY_TDT_SHARED");
    CHECK_EQ(leftovers(), 0);
}

/* Handles of one process meet; another capacity or message size is refused, here and in
 * another process. */
static void mismatched_capacity(void) {
    char name[128];
    channel_name(name, sizeof name, ".size");
    setenv("FERRY_TDT_SHARED", "*", 1);
    acltdtChannelHandle* h = acltdtCreateChannelWithCapacity(0, name, 4);
    REQUIRE(h != NULL);
    CHECK(acltdtCreateChannelWithCapacity(0, name, 8) == NULL);
    acltdtChannelHandle* same = acltdtCreateChannelWithCapacity(0, name, 4);
    REQUIRE(same != NULL);
    float values[k_values];
    acltdtDataset* dataset = numbered_dataset(values, 3);
    acltdtDataset* received = acltdtCreateDataset();
    CHECK_EQ(acltdtSendTensor(same, dataset, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtReceiveTensor(h, received, 0), ACL_SUCCESS);
    CHECK(is_message(received, 3));
    CHECK_EQ(wait_child(spawn("refused", name, "8", NULL), 10000), 0);
    setenv("FERRY_TDT_SHARED_MESSAGE_BYTES", "8192", 1);
    CHECK_EQ(wait_child(spawn("refused", name, "4", NULL), 10000), 0);
    unsetenv("FERRY_TDT_SHARED_MESSAGE_BYTES");
    destroy_numbered(dataset);
    CHECK_EQ(acltdtDestroyDataset(received), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyChannel(same), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyChannel(h), ACL_SUCCESS);
    unsetenv("FERRY_TDT_SHARED");
    CHECK_EQ(leftovers(), 0);
}

int main(int argc, char** argv) {
    if (argc > 1) {
        return run_role(argc, argv);
    }
    snprintf(tag, sizeof tag, "ferrytest%d", (int)getpid());
    REQUIRE(readlink("/proc/self/exe", self, sizeof self - 1) > 0);
    RUN(exchange_queue);
    RUN(exchange_long_name);
    RUN(exchange_process_pairs);
    RUN(creation_race);
    RUN(stop_wakes_the_other_process);
    RUN(peer_lost_wakes_a_blocked_receive);
    RUN(default_stays_in_process);
    RUN(oversize_message_sends_nothing);
    RUN(receive_validates_first);
    RUN(similar_names_stay_apart);
    RUN(mismatched_capacity);
    CHECK_EQ(leftovers(), 0);
    return check_summary();
}
