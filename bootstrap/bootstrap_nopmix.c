/*
 * The PMIx bootstrap of a build configured --without-pmix: there is none, and ucoll_init says
 * how to start such a build instead.
 */
#include "bootstrap.h"

#include <stdio.h>

ucoll_status_t bootstrap_pmix_create(bootstrap_t **bs)
{
    *bs = NULL;
    fprintf(stderr, "ucoll: this libucoll was built without PMIx (configure --without-pmix): "
                    "set UCOLL_STORE=HOST:PORT, UCOLL_RANK and UCOLL_SIZE for ucoll_init, or "
                    "call ucoll_init_store or ucoll_init_oob\n");
    return UCOLL_ERR_NOT_SUPPORTED;
}
