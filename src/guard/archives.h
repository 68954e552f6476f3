// What archivers read and write: tar and bsdtar, unzip, 7z, cpio and ar.
//
// Making an archive writes the archive and reads its inputs. Extracting one writes into a
// directory (-C, --one-top-level, -d, -o, -D, --output, or the current one) under names the
// archive chooses: that directory is a write_dirs entry, so a protected part of the tree
// below it counts as written (operands.h). Members named on the line are written under it,
// and a member renaming (tar --transform, bsdtar -s) writes where its replacement points.
// Listing, testing or printing to standard output writes nothing. Pure functions; reentrant.
#pragma once

#include "guard/operands.h"

namespace mecha::guard {

// Adds to `out` what `c` (an archiver) reads and writes. Returns false, adding nothing, when
// `c` is not one of the archivers above.
bool archive_operands(const Command& c, Operands& out);

}  // namespace mecha::guard
