/* The ceiling for pushgate's transport: libcurl's multi interface driven the way
 * pushgate drives it, with nothing else. One connection, 100 concurrent streams
 * (CURLPIPE_MULTIPLEX, CURLOPT_PIPEWAIT), easy handles reused, APNs-shaped POSTs
 * (authorization, apns-push-type, apns-topic, apns-priority; libcurl's default
 * content-type, accept and expect removed) to /3/device/<token> with 1,000 distinct
 * tokens, the apns-id header read from every answer. With THREADS > 1, that many threads
 * do the same side by side, each with its own multi handle and connection, sharing the
 * requests: pushgate's transport threads without pushgate.
 *
 * With IDS (a 6th argument, `ids`) each request also carries its own apns-id, as
 * pushgate's do (a campaign's prefix and the device's index), and the sink echoes it.
 *
 * usage: bare_curl URL CAFILE REQUESTS BODY [THREADS [ids]]
 * prints: <requests/s> <CPU microseconds per request> <delivered>
 * Built by `make bench` (PushgateBench apns) with `cc -O2 … -lcurl -lpthread`. */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

#define STREAMS 100

static size_t discard(char *data, size_t size, size_t count, void *context) {
    (void)data; (void)context;
    return size * count;
}

/* Keeps the apns-id, as pushgate does. */
static size_t header(char *data, size_t size, size_t count, void *context) {
    size_t length = size * count;
    char *apns_id = context;
    if (length > 9 && strncasecmp(data, "apns-id:", 8) == 0) {
        size_t n = length - 8 < 63 ? length - 8 : 63;
        memcpy(apns_id, data + 8, n);
        apns_id[n] = 0;
    }
    return length;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long cpu_microseconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000L + usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
}

struct slot {
    CURL *easy;
    char apns_id[64];
    /* With ids: "apns-id: …", chained before the shared header lines. */
    char id_line[64];
    struct curl_slist id_node;
};

static int with_ids;
static long id_counter;

static void next_id(struct slot *slot) {
    long n = __atomic_fetch_add(&id_counter, 1, __ATOMIC_RELAXED);
    snprintf(slot->id_line, sizeof slot->id_line, "apns-id: 01234567-89ab-4cde-8f01-%012lx", n);
}

static const char *base, *cafile, *body;
static char urls[1000][160];

/* One thread's share: its own multi handle, one connection, STREAMS handles. */
static void *drive(void *share) {
    long requests = *(long *)share;
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, 1L);
    curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, 1L);
    curl_multi_setopt(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, (long)STREAMS);

    struct curl_slist *headers = NULL;
    headers = curl_slist_append(headers, "authorization: bearer eyJhbGciOiJFUzI1NiIsImtpZCI6IktFWTEyMzQ1NjcifQ."
                                         "eyJpc3MiOiJURUFNMTIzNDU2IiwiaWF0IjoxNzAwMDAwMDAwfQ."
                                         "c2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlc2ln");
    headers = curl_slist_append(headers, "apns-push-type: alert");
    headers = curl_slist_append(headers, "apns-topic: com.example.shop");
    headers = curl_slist_append(headers, "apns-priority: 10");
    headers = curl_slist_append(headers, "content-type:");
    headers = curl_slist_append(headers, "accept:");
    headers = curl_slist_append(headers, "expect:");

    struct slot slots[STREAMS];
    for (int i = 0; i < STREAMS; i++) {
        CURL *e = curl_easy_init();
        slots[i].easy = e;
        curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
        curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_PROXY, "");
        curl_easy_setopt(e, CURLOPT_CAINFO, cafile);
        slots[i].id_node.data = slots[i].id_line;
        slots[i].id_node.next = headers;
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, with_ids ? &slots[i].id_node : headers);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header);
        curl_easy_setopt(e, CURLOPT_HEADERDATA, slots[i].apns_id);
        curl_easy_setopt(e, CURLOPT_PRIVATE, &slots[i]);
    }

    long started = 0, delivered = 0, finished = 0;
    for (int i = 0; i < STREAMS && started < requests; i++, started++) {
        curl_easy_setopt(slots[i].easy, CURLOPT_URL, urls[started % 1000]);
        if (with_ids) next_id(&slots[i]);
        curl_multi_add_handle(multi, slots[i].easy);
    }
    while (finished < requests) {
        int running = 0, left = 0;
        curl_multi_perform(multi, &running);
        CURLMsg *message;
        while ((message = curl_multi_info_read(multi, &left))) {
            if (message->msg != CURLMSG_DONE) continue;
            CURL *e = message->easy_handle;
            long status = 0;
            curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
            if (message->data.result == CURLE_OK && status == 200) delivered++;
            finished++;
            curl_multi_remove_handle(multi, e);
            if (started < requests) {
                curl_easy_setopt(e, CURLOPT_URL, urls[started % 1000]);
                if (with_ids) {
                    struct slot *slot;
                    curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&slot);
                    next_id(slot);
                }
                curl_multi_add_handle(multi, e);
                started++;
            }
        }
        if (finished < requests) curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    for (int i = 0; i < STREAMS; i++) curl_easy_cleanup(slots[i].easy);
    curl_slist_free_all(headers);
    curl_multi_cleanup(multi);
    *(long *)share = delivered;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 5 || argc > 7 || (argc == 7 && strcmp(argv[6], "ids") != 0)) {
        fprintf(stderr, "usage: bare_curl URL CAFILE REQUESTS BODY [THREADS [ids]]\n");
        return 2;
    }
    base = argv[1];
    cafile = argv[2];
    body = argv[4];
    long requests = atol(argv[3]);
    int threads = argc >= 6 ? atoi(argv[5]) : 1;
    with_ids = argc == 7;
    if (threads < 1 || threads > 64) threads = 1;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    for (int i = 0; i < 1000; i++) snprintf(urls[i], sizeof urls[i], "%s/3/device/%064x", base, i);
    pthread_t ids[64];
    long shares[64];
    double t0 = now();
    long cpu0 = cpu_microseconds();
    for (int t = 0; t < threads; t++) {
        shares[t] = requests / threads + (t < requests % threads ? 1 : 0);
        pthread_create(&ids[t], NULL, drive, &shares[t]);
    }
    long delivered = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(ids[t], NULL);
        delivered += shares[t];
    }
    double seconds = now() - t0;
    long cpu = cpu_microseconds() - cpu0;
    printf("%.0f %.1f %ld\n", requests / seconds, (double)cpu / requests, delivered);
    return delivered == requests ? 0 : 1;
}
