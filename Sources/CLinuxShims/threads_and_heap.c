#include <errno.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CLinuxShims.h"

void pg_malloc_trim(void) {
    (void)malloc_trim(0);
}

int pg_thread_nice(void) {
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    return errno == 0 ? nice : -100;
}

int pg_thread_renice(int by) {
    int nice = pg_thread_nice();
    if (nice == -100) return -100;
    int wanted = nice + by > 19 ? 19 : nice + by;
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), wanted) != 0) return -100;
    return pg_thread_nice();
}
