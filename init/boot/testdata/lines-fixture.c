/* The fast tier's vmlinux with DWARF (init/boot/lines.rs's tests):
 * `add` is inlined into `outer`, whose lines the tests look for.
 * Rebuild: gcc -g -O2 -nostdlib -static -fno-asynchronous-unwind-tables \
 *   -fdebug-prefix-map=$PWD=/src/linux -Wl,--build-id=sha1 -Wl,-e,outer \
 *   -o lines-fixture.elf lines-fixture.c */
static inline __attribute__((always_inline)) int add(volatile int *p, int k)
{
	*p += k;
	return *p;
}

volatile int sink;

int outer(int k)
{
	int r = add(&sink, k);
	r += add(&sink, 2 * k);
	return r;
}
