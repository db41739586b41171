// Built instead of media_transform.cpp while the media library does not exist yet.
#include "common/error.h"
#include "loader/sample_transform.h"

namespace bt::loader {

std::unique_ptr<SampleTransform> make_media_transform() {
  fail("this build has no media library (src/media): the loader cannot decode images");
}

}  // namespace bt::loader
