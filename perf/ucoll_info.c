/*
 * ucoll_info: what this ucoll build is and would do.
 *   -v  version, and the UCX and PMIx versions built against and loaded
 *   -a  the algorithms of every collective (the names ucoll_set_algorithm and UCOLL_*_ALG take)
 *   -c  every UCOLL_* environment variable with its default and meaning
 *   -d  the UCX transports and devices a ucoll process would use with this environment
 */
#include "config.h"
#include "ucoll_int.h"

#include <getopt.h>
#ifdef UCOLL_HAVE_PMIX
#include <pmix.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: ucoll_info [-v] [-a] [-c] [-d]\n"
               "  -v  version and build (UCX/PMIx versions)\n"
               "  -a  algorithms per collective\n"
               "  -c  UCOLL_* variables with defaults and meaning\n"
               "  -d  UCX transports and devices ucoll would use (honours UCX_TLS, "
               "UCX_NET_DEVICES)\n");
}

static void print_version(void)
{
    unsigned major, minor, release;
    ucp_get_version(&major, &minor, &release);
    printf("ucoll %s (API version %d)\n", PACKAGE_VERSION, UCOLL_API_VERSION);
    printf("  UCX:  built with %s, loaded %u.%u.%u\n", UCOLL_BUILD_UCX_VERSION, major, minor,
           release);
#ifdef UCOLL_HAVE_PMIX
    printf("  PMIx: built with %s, loaded %s\n", UCOLL_BUILD_PMIX_VERSION, PMIx_Get_version());
#else
    printf("  PMIx: none (configure --without-pmix: ucoll_init starts through UCOLL_STORE)\n");
#endif
}

static void print_algorithms(void)
{
    for (int c = 0; c < UCOLL_NCOLLS; c++) {
        size_t n;
        const alg_desc_t *algs = alg_list((ucoll_coll_t)c, &n);
        printf("%s:\n", alg_coll_name((ucoll_coll_t)c));
        printf("  %-20s %s\n", "auto", "default: chosen per call (see README, Algorithm choice)");
        for (size_t i = 0; i < n; i++) {
            char name[64];
            snprintf(name, sizeof(name), "%s%s", algs[i].name,
                     (algs[i].flags & ALG_PARAM_REQUIRED)   ? ":Q"
                     : (algs[i].flags & ALG_PARAM_OPTIONAL) ? "[:K]"
                                                            : "");
            const int reorders =
                cost_reduces((ucoll_coll_t)c) && !(algs[i].flags & ALG_ORDER_PRESERVING);
            printf("  %-20s %s%s\n", name, algs[i].summary,
                   reorders ? " [commutative ops only]" : "");
        }
        const alg_desc_t *na = alg_node_aware((ucoll_coll_t)c);
        if (na != NULL) /* where the layout does not serve it, calls run auto's choice */
            printf("  %-20s %s [more than one host; else auto]\n", na->name, na->summary);
    }
}

static void print_config(void)
{
    size_t n;
    const config_var_t *vars = config_vars(&n);
    for (size_t i = 0; i < n; i++)
        printf("%-24s default: %s\n    %s\n", vars[i].name, vars[i].default_value, vars[i].meaning);
}

static int print_devices(void)
{
    ucp_config_t *config;
    ucp_context_h context;
    ucp_params_t params;
    memset(&params, 0, sizeof(params));
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_TAG;
    if (ucp_config_read(NULL, NULL, &config) != UCS_OK ||
        ucp_init(&params, config, &context) != UCS_OK) {
        fprintf(stderr, "ucoll_info: UCX could not be initialised: check UCX_TLS and "
                        "UCX_NET_DEVICES (ucx_info -d lists what exists)\n");
        return 1;
    }
    ucp_config_release(config);
    printf("UCX_TLS=%s UCX_NET_DEVICES=%s\n", getenv("UCX_TLS") ? getenv("UCX_TLS") : "(all)",
           getenv("UCX_NET_DEVICES") ? getenv("UCX_NET_DEVICES") : "(all)");
    ucp_context_print_info(context, stdout);
    ucp_cleanup(context);
    return 0;
}

int main(int argc, char **argv)
{
    int opt, any = 0, rc = 0;
    while ((opt = getopt(argc, argv, "vacdh")) != -1) {
        any = 1;
        switch (opt) {
        case 'v':
            print_version();
            break;
        case 'a':
            print_algorithms();
            break;
        case 'c':
            print_config();
            break;
        case 'd':
            rc |= print_devices();
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (!any || optind < argc) {
        usage(any ? stderr : stdout);
        return any ? 2 : 0;
    }
    return rc;
}
