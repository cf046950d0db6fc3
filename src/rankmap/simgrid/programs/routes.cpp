/* rankmap route dumper: the links SimGrid routes each host pair over.
 *
 * Usage: routes PLATFORM.xml PAIRS
 * PAIRS: text, one "SRC DST" pair of host numbers per line (hosts are named node-<n>).
 * Prints one line per pair: "SRC DST" then, per link of the route in order,
 * " NAME@BANDWIDTH" (bytes/s). Built against the s4u API with -lsimgrid.
 */
#include <simgrid/s4u.hpp>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  simgrid::s4u::Engine engine(&argc, argv);
  if (argc < 3) {
    fprintf(stderr, "usage: routes PLATFORM.xml PAIRS\n");
    return 2;
  }
  engine.load_platform(argv[1]);
  FILE* fh = fopen(argv[2], "r");
  if (!fh) {
    fprintf(stderr, "routes: cannot open %s\n", argv[2]);
    return 2;
  }
  long a, b;
  while (fscanf(fh, "%ld %ld", &a, &b) == 2) {
    const simgrid::s4u::Host* src = engine.host_by_name_or_null("node-" + std::to_string(a));
    const simgrid::s4u::Host* dst = engine.host_by_name_or_null("node-" + std::to_string(b));
    if (!src || !dst) {
      fprintf(stderr, "routes: no host node-%ld or node-%ld\n", a, b);
      return 2;
    }
    std::vector<simgrid::s4u::Link*> links;
    double latency = 0;
    src->route_to(dst, links, &latency);
    printf("%ld %ld", a, b);
    for (const auto* link : links) printf(" %s@%.10g", link->get_cname(), link->get_bandwidth());
    printf("\n");
  }
  fclose(fh);
  return 0;
}
