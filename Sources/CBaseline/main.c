// The C baselines of `busctl bench`: plain libzmq in C, every role (publisher, forwarder, each
// subscriber; requester, forwarder, worker) a separate process with its own context, so the bus
// is compared with what the transport itself does, not with the package's Swift wrapper.
//
//   CBaseline pubsub     --port P --seconds S --subscribers K [--hwm H] --frames HEX,HEX,...
//       XPUB -> zmq_proxy (XSUB/XPUB) -> K SUBs, the publisher sending the frames for S seconds.
//       Prints {"rate":delivered msg/s (the sum of each subscriber's rate),"sent":n,"received":n,"lost":n,"cut":n}:
//       "cut" subscribers stopped at the end of their window (as long as the publisher's) with
//       messages still queued; "lost" counts only the others.
//   CBaseline latency    --port P --seconds S --frames HEX,...
//       REQ -> zmq_proxy (ROUTER/DEALER) -> REP, one request at a time.
//       Prints {"count":n,"p50":us,"p99":us,"p999":us}.
//   CBaseline throughput --port P --seconds S --in-flight N --frames HEX,...
//       DEALER with N requests outstanding, each [""] + the frames -> zmq_proxy -> REP (echo).
//       Prints {"rate":requests/s,"count":n}.
//
// The forwarder binds tcp://127.0.0.1:P (frontend) and P+1 (backend). Frames are hex, comma
// separated; an empty item is an empty frame. Exit status 0 with the JSON line, else 1 and a
// reason on stderr. Children die with the parent (PR_SET_PDEATHSIG), and the parent ends itself
// after S + 60 s whatever happens, so an interrupted bench leaves no process behind.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#define MAX_FRAMES 16
#define MAX_SUBSCRIBERS 64

typedef struct {
    unsigned char *data[MAX_FRAMES];
    size_t size[MAX_FRAMES];
    int count;
} frames_t;

typedef struct {
    const char *mode;
    int port;
    double seconds;
    int subscribers;
    int hwm;
    int in_flight;
    frames_t frames;
} options_t;

static void fail(const char *what) {
    fprintf(stderr, "CBaseline: %s: %s\n", what, zmq_strerror(zmq_errno()));
    exit(1);
}

static void usage(const char *why) {
    fprintf(stderr, "CBaseline: %s\nusage: CBaseline pubsub|latency|throughput --port P --seconds S "
                    "[--subscribers K] [--hwm H] [--in-flight N] --frames HEX,HEX,...\n", why);
    exit(64);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void parse_frames(const char *text, frames_t *frames) {
    frames->count = 0;
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t length = end ? (size_t)(end - p) : strlen(p);
        if (frames->count == MAX_FRAMES) usage("too many frames");
        if (length % 2) usage("a frame's hex has an odd length");
        unsigned char *bytes = malloc(length / 2 + 1);
        for (size_t i = 0; i < length / 2; i++) {
            int hi = hex_value(p[2 * i]), lo = hex_value(p[2 * i + 1]);
            if (hi < 0 || lo < 0) usage("a frame is not hex");
            bytes[i] = (unsigned char)(hi * 16 + lo);
        }
        frames->data[frames->count] = bytes;
        frames->size[frames->count] = length / 2;
        frames->count++;
        if (!end) break;
        p = end + 1;
    }
}

static options_t parse(int argc, char **argv) {
    options_t o = {.port = 0, .seconds = 2, .subscribers = 1, .hwm = 0, .in_flight = 1};
    if (argc < 2) usage("no mode");
    o.mode = argv[1];
    int have_frames = 0;
    for (int i = 2; i < argc; i++) {
        if (i + 1 >= argc) usage("an option has no value");
        const char *name = argv[i], *value = argv[++i];
        if (!strcmp(name, "--port")) o.port = atoi(value);
        else if (!strcmp(name, "--seconds")) o.seconds = atof(value);
        else if (!strcmp(name, "--subscribers")) o.subscribers = atoi(value);
        else if (!strcmp(name, "--hwm")) o.hwm = atoi(value);
        else if (!strcmp(name, "--in-flight")) o.in_flight = atoi(value);
        else if (!strcmp(name, "--frames")) { parse_frames(value, &o.frames); have_frames = 1; }
        else usage("unknown option");
    }
    if (o.port <= 0 || o.port > 65534) usage("--port must be a free port below 65535 (P and P+1 are bound)");
    if (o.seconds <= 0) usage("--seconds must be positive");
    if (o.subscribers < 1 || o.subscribers > MAX_SUBSCRIBERS) usage("--subscribers must be 1-64");
    if (o.hwm < 0) usage("--hwm must be 0 (none) or more");
    if (o.in_flight < 1) usage("--in-flight must be at least 1");
    if (!have_frames || o.frames.count == 0) usage("--frames is required");
    return o;
}

static void endpoint(char *buffer, size_t size, int port) {
    snprintf(buffer, size, "tcp://127.0.0.1:%d", port);
}

static void *make_socket(void *context, int type, int hwm) {
    void *socket = zmq_socket(context, type);
    if (!socket) fail("zmq_socket");
    if (zmq_setsockopt(socket, ZMQ_SNDHWM, &hwm, sizeof hwm) || zmq_setsockopt(socket, ZMQ_RCVHWM, &hwm, sizeof hwm))
        fail("zmq_setsockopt HWM");
    int linger = 0;
    zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof linger);
    return socket;
}

static void set_int(void *socket, int option, int value) {
    if (zmq_setsockopt(socket, option, &value, sizeof value)) fail("zmq_setsockopt");
}

// Sends the frames as one message (copies, as any application's zmq_send does).
static int send_frames(void *socket, const frames_t *frames, int prefix_empty) {
    if (prefix_empty && zmq_send(socket, "", 0, ZMQ_SNDMORE) < 0) return -1;
    for (int i = 0; i < frames->count; i++) {
        if (zmq_send(socket, frames->data[i], frames->size[i], i + 1 < frames->count ? ZMQ_SNDMORE : 0) < 0) return -1;
    }
    return 0;
}

// Receives one whole message; returns the size of its first frame, or -1 (timeout, error).
static int receive_message(void *socket, zmq_msg_t *msg) {
    int first = -1;
    do {
        if (zmq_msg_recv(msg, socket, 0) < 0) return -1;
        if (first < 0) first = (int)zmq_msg_size(msg);
    } while (zmq_msg_more(msg));
    return first;
}

// A child process for one role; it dies with the parent.
static pid_t spawn(void (*role)(const options_t *, int), const options_t *o, int index) {
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) { perror("CBaseline: fork"); exit(1); }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        role(o, index);
        _exit(0);
    }
    return pid;
}

// --- forwarders and the worker: they run until the parent stops them ----------------------

static void proxy_role(void *context, int front_type, int back_type, const options_t *o) {
    char front_endpoint[64], back_endpoint[64];
    endpoint(front_endpoint, sizeof front_endpoint, o->port);
    endpoint(back_endpoint, sizeof back_endpoint, o->port + 1);
    void *front = make_socket(context, front_type, o->hwm);
    void *back = make_socket(context, back_type, o->hwm);
    if (zmq_bind(front, front_endpoint)) fail("forwarder bind (frontend)");
    if (zmq_bind(back, back_endpoint)) fail("forwarder bind (backend)");
    zmq_proxy(front, back, NULL);
}

static void pubsub_proxy(const options_t *o, int index) {
    (void)index;
    proxy_role(zmq_ctx_new(), ZMQ_XSUB, ZMQ_XPUB, o);
}

static void reqrep_proxy(const options_t *o, int index) {
    (void)index;
    proxy_role(zmq_ctx_new(), ZMQ_ROUTER, ZMQ_DEALER, o);
}

// REP echoing every message back, moving each frame (zmq_msg_send) rather than copying it.
static void echo_worker(const options_t *o, int index) {
    (void)index;
    void *context = zmq_ctx_new();
    void *rep = make_socket(context, ZMQ_REP, o->hwm);
    char back_endpoint[64];
    endpoint(back_endpoint, sizeof back_endpoint, o->port + 1);
    if (zmq_connect(rep, back_endpoint)) fail("worker connect");
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    for (;;) {
        if (zmq_msg_recv(&msg, rep, 0) < 0) continue;
        int more = zmq_msg_more(&msg);
        zmq_msg_send(&msg, rep, more ? ZMQ_SNDMORE : 0);
    }
}

// --- pubsub --------------------------------------------------------------------------------

// Results pass from each child to the parent through a pipe of its own.
static int result_pipes[MAX_SUBSCRIBERS + 1][2];

typedef struct {
    uint64_t received, first, last;
    // 1: stopped at the end of its window with messages still queued (not read to the end).
    uint64_t cut;
} sub_result_t;

static void ready_topic(char *buffer, size_t size, int index) {
    snprintf(buffer, size, "cbaseline.ready.%d", index);
}

// A SUB on the data topic, then on a readiness topic of its own: the publisher sees each
// readiness subscription only after the data subscription that went before it on the same pipe.
static void subscriber(const options_t *o, int index) {
    void *context = zmq_ctx_new();
    void *sub = make_socket(context, ZMQ_SUB, o->hwm);
    char back_endpoint[64], ready[64];
    endpoint(back_endpoint, sizeof back_endpoint, o->port + 1);
    set_int(sub, ZMQ_RCVTIMEO, 200);
    if (zmq_connect(sub, back_endpoint)) fail("subscriber connect");
    if (zmq_setsockopt(sub, ZMQ_SUBSCRIBE, o->frames.data[0], o->frames.size[0])) fail("subscribe");
    ready_topic(ready, sizeof ready, index);
    if (zmq_setsockopt(sub, ZMQ_SUBSCRIBE, ready, strlen(ready))) fail("subscribe");
    // The end marker is the data topic and one more byte: a one-frame message after the data.
    int end_size = (int)o->frames.size[0] + 1;
    sub_result_t result = {0, 0, 0, 0};
    // A subscriber reads for as long as the publisher sends, from its first message on. With no
    // high-water mark a publisher that outruns its subscribers leaves them queues that grow
    // without bound (sixteen took half a minute to drain two seconds): what is still queued at
    // the end of the window is left unread, and its count is not a loss.
    uint64_t window = (uint64_t)(o->seconds * 1e9);
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    uint64_t started = now_ns(), idle_since = now_ns();
    for (;;) {
        int first = receive_message(sub, &msg);
        if (first < 0) {
            uint64_t t = now_ns();
            // Idle 3 s after data started, or no data S + 15 s after start: the publisher is gone.
            if (result.received > 0 && t - idle_since > 3000000000u) break;
            if (result.received == 0 && t - started > (uint64_t)((o->seconds + 15) * 1e9)) break;
            continue;
        }
        if (first == end_size) break;
        result.received++;
        result.last = idle_since = now_ns();
        if (result.first == 0) result.first = result.last;
        if (result.last - result.first > window) {
            result.cut = 1;
            break;
        }
    }
    if (write(result_pipes[index][1], &result, sizeof result) != sizeof result) _exit(1);
}

static void publisher(const options_t *o, int index) {
    (void)index;
    void *context = zmq_ctx_new();
    void *pub = make_socket(context, ZMQ_XPUB, o->hwm);
    char front_endpoint[64];
    endpoint(front_endpoint, sizeof front_endpoint, o->port);
    set_int(pub, ZMQ_RCVTIMEO, 10000);
    if (zmq_connect(pub, front_endpoint)) fail("publisher connect");
    // Wait for every subscriber's readiness subscription (XSUB resends the distinct ones to a
    // publisher that connects late), so that none misses the start.
    int seen[MAX_SUBSCRIBERS] = {0}, ready = 0;
    char buffer[256];
    while (ready < o->subscribers) {
        int n = zmq_recv(pub, buffer, sizeof buffer - 1, 0);
        if (n < 0) fail("publisher: the subscribers did not subscribe within 10 s");
        if (n > (int)sizeof buffer - 1) n = (int)sizeof buffer - 1;
        buffer[n] = 0;
        int i;
        if (buffer[0] == 1 && sscanf(buffer + 1, "cbaseline.ready.%d", &i) == 1 && i >= 0 && i < o->subscribers && !seen[i]) {
            seen[i] = 1;
            ready++;
        }
    }
    uint64_t sent = 0, end = now_ns() + (uint64_t)(o->seconds * 1e9);
    while (now_ns() < end) {
        for (int k = 0; k < 256; k++) {
            if (send_frames(pub, &o->frames, 0) == 0) sent++;
        }
    }
    unsigned char marker[256];
    memcpy(marker, o->frames.data[0], o->frames.size[0]);
    marker[o->frames.size[0]] = '!';
    zmq_send(pub, marker, o->frames.size[0] + 1, 0);
    // Linger until everything queued has gone to the forwarder.
    int linger = -1;
    zmq_setsockopt(pub, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(pub);
    zmq_ctx_term(context);
    if (write(result_pipes[MAX_SUBSCRIBERS][1], &sent, sizeof sent) != sizeof sent) _exit(1);
}

static int pubsub(const options_t *o) {
    if (o->frames.size[0] == 0 || o->frames.size[0] > 200) usage("the first frame (the topic) must be 1-200 bytes");
    for (int i = 0; i < o->subscribers; i++) {
        if (pipe(result_pipes[i])) { perror("CBaseline: pipe"); return 1; }
    }
    if (pipe(result_pipes[MAX_SUBSCRIBERS])) { perror("CBaseline: pipe"); return 1; }
    pid_t proxy = spawn(pubsub_proxy, o, 0);
    pid_t subs[MAX_SUBSCRIBERS];
    for (int i = 0; i < o->subscribers; i++) subs[i] = spawn(subscriber, o, i);
    pid_t pub = spawn(publisher, o, 0);
    // Only the children write: a child that dies without its result ends the read.
    for (int i = 0; i < o->subscribers; i++) close(result_pipes[i][1]);
    close(result_pipes[MAX_SUBSCRIBERS][1]);
    uint64_t sent = 0, received = 0, cut = 0, lost = 0;
    double rate = 0;
    int ok = read(result_pipes[MAX_SUBSCRIBERS][0], &sent, sizeof sent) == sizeof sent;
    for (int i = 0; i < o->subscribers; i++) {
        sub_result_t r;
        if (read(result_pipes[i][0], &r, sizeof r) != sizeof r) { ok = 0; continue; }
        received += r.received;
        if (r.last > r.first) rate += (double)r.received / ((double)(r.last - r.first) / 1e9);
        // Loss is counted where a subscriber read to the end marker.
        if (r.cut) cut++;
        else if (r.received < sent) lost += sent - r.received;
    }
    kill(proxy, SIGKILL);
    waitpid(proxy, NULL, 0);
    waitpid(pub, NULL, 0);
    for (int i = 0; i < o->subscribers; i++) waitpid(subs[i], NULL, 0);
    if (!ok) { fprintf(stderr, "CBaseline: a pubsub process ended without a result\n"); return 1; }
    printf("{\"rate\":%.1f,\"sent\":%llu,\"received\":%llu,\"lost\":%llu,\"cut\":%llu}\n", rate, (unsigned long long)sent,
           (unsigned long long)received, (unsigned long long)lost, (unsigned long long)cut);
    return 0;
}

// --- reqrep ----------------------------------------------------------------------------------

typedef struct {
    uint64_t count;
    double p50, p99, p999, rate;
} client_result_t;

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// The same rule as busctl's own percentiles: the value at index floor(n * p).
static double percentile(const double *sorted, uint64_t n, double p) {
    if (n == 0) return 0;
    uint64_t i = (uint64_t)((double)n * p);
    return sorted[i < n ? i : n - 1];
}

static void *client_socket(void **context, int type, const options_t *o) {
    *context = zmq_ctx_new();
    void *socket = make_socket(*context, type, o->hwm);
    char front_endpoint[64];
    endpoint(front_endpoint, sizeof front_endpoint, o->port);
    set_int(socket, ZMQ_RCVTIMEO, 5000);
    if (zmq_connect(socket, front_endpoint)) fail("client connect");
    return socket;
}

static void latency_client(const options_t *o, int index) {
    (void)index;
    void *context;
    void *req = client_socket(&context, ZMQ_REQ, o);
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    // One round trip first: the connections are up before timing starts.
    if (send_frames(req, &o->frames, 0) || receive_message(req, &msg) < 0) fail("latency: no first reply");
    size_t capacity = 1 << 16;
    double *latencies = malloc(capacity * sizeof(double));
    uint64_t n = 0, end = now_ns() + (uint64_t)(o->seconds * 1e9);
    while (now_ns() < end) {
        uint64_t t0 = now_ns();
        if (send_frames(req, &o->frames, 0) || receive_message(req, &msg) < 0) fail("latency: no reply within 5 s");
        if (n == capacity) latencies = realloc(latencies, (capacity *= 2) * sizeof(double));
        latencies[n++] = (double)(now_ns() - t0) / 1000;
    }
    qsort(latencies, n, sizeof(double), compare_doubles);
    client_result_t r = {n, percentile(latencies, n, 0.5), percentile(latencies, n, 0.99), percentile(latencies, n, 0.999), 0};
    if (write(result_pipes[0][1], &r, sizeof r) != sizeof r) _exit(1);
}

static void throughput_client(const options_t *o, int index) {
    (void)index;
    void *context;
    void *dealer = client_socket(&context, ZMQ_DEALER, o);
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    for (int i = 0; i < o->in_flight; i++) {
        if (send_frames(dealer, &o->frames, 1)) fail("throughput: send");
    }
    // Timing starts at the first reply: the connections are up.
    if (receive_message(dealer, &msg) < 0) fail("throughput: no first reply");
    if (send_frames(dealer, &o->frames, 1)) fail("throughput: send");
    uint64_t done = 0, start = now_ns(), end = start + (uint64_t)(o->seconds * 1e9), t = start;
    while (t < end) {
        if (receive_message(dealer, &msg) < 0) fail("throughput: no reply within 5 s");
        done++;
        if (send_frames(dealer, &o->frames, 1)) fail("throughput: send");
        if ((done & 63) == 0) t = now_ns();
    }
    t = now_ns();
    client_result_t r = {done, 0, 0, 0, (double)done / ((double)(t - start) / 1e9)};
    if (write(result_pipes[0][1], &r, sizeof r) != sizeof r) _exit(1);
}

static int reqrep(const options_t *o, int latency) {
    if (pipe(result_pipes[0])) { perror("CBaseline: pipe"); return 1; }
    pid_t proxy = spawn(reqrep_proxy, o, 0);
    pid_t worker = spawn(echo_worker, o, 0);
    pid_t client = spawn(latency ? latency_client : throughput_client, o, 0);
    close(result_pipes[0][1]);
    client_result_t r;
    int ok = read(result_pipes[0][0], &r, sizeof r) == sizeof r;
    waitpid(client, NULL, 0);
    // SIGTERM, not SIGKILL: a profiler that writes its counts when the process ends (callgrind,
    // scripts/instructions-per-request) gets them for the worker and the forwarder as well.
    kill(worker, SIGTERM);
    kill(proxy, SIGTERM);
    waitpid(worker, NULL, 0);
    waitpid(proxy, NULL, 0);
    if (!ok) { fprintf(stderr, "CBaseline: the client ended without a result\n"); return 1; }
    if (latency)
        printf("{\"count\":%llu,\"p50\":%.2f,\"p99\":%.2f,\"p999\":%.2f}\n", (unsigned long long)r.count, r.p50, r.p99, r.p999);
    else
        printf("{\"rate\":%.1f,\"count\":%llu}\n", r.rate, (unsigned long long)r.count);
    return 0;
}

int main(int argc, char **argv) {
    // A parent that blocks or ignores signals (busctl does, to handle them itself) passes that on
    // through exec: unblock them, so that the alarm below and the stops of the children work.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGALRM, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    options_t o = parse(argc, argv);
    // Whatever happens, the run ends: its children follow (PR_SET_PDEATHSIG).
    alarm((unsigned)o.seconds + 60);
    if (!strcmp(o.mode, "pubsub")) return pubsub(&o);
    if (!strcmp(o.mode, "latency")) return reqrep(&o, 1);
    if (!strcmp(o.mode, "throughput")) return reqrep(&o, 0);
    usage("unknown mode");
    return 64;
}
