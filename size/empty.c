/* The baseline: a program that uses nothing of the library. */
#include "size.h"

int sf_size_main(void)
{
    return (int)sf_size_in;   /* start.c's variables are in every program */
}
