/* The bare floor for the per-event part of scripts/bench: one nonblocking
 * socket in an epoll loop, 64 KiB reads, event ends ("\n\n") counted with
 * memchr; no de-chunking, no parsing. Sends `GET /event`, and once EVENTS
 * event ends are read prints {"events": N} and waits for stdin to close
 * (the bench reads its CPU while it is still alive). With EVENTS 0 it reads
 * until stdin closes, then prints how many it read (a real server's stream,
 * whose length is not known before).
 *
 * Usage: epoll_scan HOST:PORT EVENTS */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: epoll_scan HOST:PORT EVENTS\n");
        return 2;
    }
    char host[64];
    snprintf(host, sizeof host, "%s", argv[1]);
    char *colon = strrchr(host, ':');
    if (!colon) return 2;
    *colon = 0;
    long want = atol(argv[2]);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(atoi(colon + 1))};
    inet_pton(AF_INET, host, &address.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        perror("connect");
        return 1;
    }
    static const char request[] = "GET /event HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n";
    if (write(fd, request, sizeof request - 1) != (ssize_t)(sizeof request - 1)) return 1;
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) return 1;
    int epoll = epoll_create1(0);
    struct epoll_event interest = {.events = EPOLLIN, .data.fd = fd};
    epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &interest);
    if (want == 0) {
        struct epoll_event input = {.events = EPOLLIN, .data.fd = 0};
        epoll_ctl(epoll, EPOLL_CTL_ADD, 0, &input);
        want = -1;
    }
    static char buffer[1 << 16];
    long events = 0;
    int newline_last = 0; /* the previous read ended with '\n' */
    while (want < 0 || events < want) {
        struct epoll_event ready;
        if (epoll_wait(epoll, &ready, 1, -1) < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        if (ready.data.fd == 0) {
            if (read(0, buffer, sizeof buffer) > 0) continue;
            break;
        }
        for (;;) {
            ssize_t n = read(fd, buffer, sizeof buffer);
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
            if (n <= 0) {
                fprintf(stderr, "stream ended after %ld events\n", events);
                return 1;
            }
            if (newline_last && buffer[0] == '\n') events++;
            for (char *at = buffer, *end = buffer + n; (at = memchr(at, '\n', end - at)); at++)
                if (at + 1 < end && at[1] == '\n') events++, at++;
            newline_last = buffer[n - 1] == '\n';
        }
    }
    printf("{\"events\": %ld}\n", events);
    fflush(stdout);
    while (want >= 0 && read(0, buffer, sizeof buffer) > 0) {
    }
    return 0;
}
