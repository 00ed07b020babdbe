/* The fixture tree's fs/exec.c, compiled in another build directory. */
volatile int sink;

int exec_step(int k)
{
	sink += k;
	return sink;
}
