/* The reference for `pushgate check-link --stdin`: libcurl's URL API over the same lines.
 * For each line of standard input: curl_url_set(CURLUPART_URL) parses it (unknown
 * schemes allowed, so the app's scheme parses too), curl_url_get(CURLUPART_URL) writes
 * libcurl's normalised form, printed on its own line; a refused line prints its CURLUcode.
 * Built by Benchmarks/linkcheck/run.sh with `cc -O2 ... -lcurl`. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    static char out[1 << 16];
    setvbuf(stdout, out, _IOFBF, sizeof out);
    CURLU *url = curl_url();
    if (!url) { fputs("curl_url() failed\n", stderr); return 2; }
    char *line = NULL;
    size_t capacity = 0;
    ssize_t length;
    unsigned long lines = 0, refused = 0;
    while ((length = getline(&line, &capacity, stdin)) >= 0) {
        if (length > 0 && line[length - 1] == '\n') line[--length] = 0;
        if (length > 0 && line[length - 1] == '\r') line[--length] = 0;
        lines++;
        CURLUcode rc = curl_url_set(url, CURLUPART_URL, line, CURLU_NON_SUPPORT_SCHEME);
        char *normalised = NULL;
        if (rc == CURLUE_OK) rc = curl_url_get(url, CURLUPART_URL, &normalised, 0);
        if (rc == CURLUE_OK) {
            fputs(normalised, stdout);
            fputc('\n', stdout);
            curl_free(normalised);
        } else {
            refused++;
            printf("error %d\n", (int)rc);
        }
    }
    free(line);
    curl_url_cleanup(url);
    fprintf(stderr, "curl-url-lines: %lu lines, %lu refused\n", lines, refused);
    return 0;
}
