/* The entry point of every reference program (see size.h): no C runtime, no vector table;
 * an "empty" firmware is this file plus empty.c. */
#include "size.h"

volatile uintptr_t sf_size_in;
volatile int sf_size_out;

void sf_size_entry(void);
void sf_size_entry(void)
{
    sf_size_out = sf_size_main();
    for (;;) {
    }
}
