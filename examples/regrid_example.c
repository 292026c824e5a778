/* placeholder */
#include <stdio.h>
#include "spart.h"
int main(void) { printf("spart %s\n", spart_version()); return 0; }
