/* 2-D Delaunay triangulation exactly as scipy.spatial.Delaunay computes it: Qhull 2020.2
 * (vendor/qhull_r, the copy scipy vendors) with scipy's options "d Qbb Qc Qz Q12 Qt", lower
 * Delaunay facets in Qhull's facet order, the first two vertices swapped on clockwise facets.
 * Duplicate and cocircular points are resolved by Qhull itself, as in scipy. */
#include <stdio.h>
#include "qhull_ra.h"

/* Triangulates n points (x0 y0 x1 y1 ...). Writes up to `cap` triangles (three point indices
 * each) to `out` and their count to *ntri. Returns 0, or Qhull's non-zero exit code (e.g. for
 * fewer than 3 or collinear points), or -1 for a non-simplicial facet. */
int faithful_delaunay2d(const double *points, int n, int *out, int cap, int *ntri) {
    qhT qh_qh;
    qhT *qh = &qh_qh;
    facetT *facet;
    char cmd[] = "qhull d Qbb Qc Qz Q12 Qt";
    int exitcode, curlong, totlong, j = 0;
    /* Qhull's messages go to a scratch file, never to the caller's stderr. */
    FILE *errfile = tmpfile();
    if (!errfile)
        errfile = fopen("/dev/null", "w");

    qh_zero(qh, errfile);
    exitcode = qh_new_qhull(qh, 2, n, (coordT *)points, False, cmd, NULL, errfile);
    if (!exitcode) {
        FORALLfacets {
            if (facet->upperdelaunay != qh->UPPERdelaunay)
                continue;
            if (!facet->simplicial && (qh_setsize(qh, facet->vertices) != 3 || qh_setsize(qh, facet->neighbors) != 3)) {
                exitcode = -1;
                break;
            }
            if (j < cap) {
                int v[3], i;
                for (i = 0; i < 3; i++)
                    v[i] = qh_pointid(qh, ((vertexT *)facet->vertices->e[i].p)->point);
                if (facet->toporient == qh_ORIENTclock) {
                    int t = v[0];
                    v[0] = v[1];
                    v[1] = t;
                }
                for (i = 0; i < 3; i++)
                    out[3 * j + i] = v[i];
            }
            j++;
        }
        *ntri = j;
    }
    qh->NOerrexit = True;
    qh_freeqhull(qh, !qh_ALL);
    qh_memfreeshort(qh, &curlong, &totlong);
    if (errfile)
        fclose(errfile);
    return exitcode;
}
