// The journal's manifest read as Redis 7.0.15 reads it (aofLoadManifestFromFile): an empty
// manifest, a blank line, a line without its newline, an unknown file type refuse the start
// with Redis's words; comments are skipped. In process, and once against the latchd binary:
// an emptied manifest must not start an empty server that grants every lock again.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "durability/latchd_child.h"
#include "journal/aof_files.h"
#include "support/raw_connection.h"

namespace latch::journal {
namespace {

namespace fs = std::filesystem;

class ManifestTest : public ::testing::Test {
 protected:
  ManifestTest() {
    char d[] = "/tmp/latch-manifest-XXXXXX";
    dir_ = ::mkdtemp(d) != nullptr ? d : "";
    path_ = dir_ + "/appendonly.aof.manifest";
  }
  ~ManifestTest() override { fs::remove_all(dir_); }

  // ReadManifest's error for a manifest holding `text`; "" when it reads.
  std::string ErrorFor(const std::string& text) {
    std::ofstream(path_, std::ios::binary) << text;
    try {
      ReadManifest(path_);
      return "";
    } catch (const std::runtime_error& e) {
      return e.what();
    }
  }
  std::string dir_, path_;
};

TEST_F(ManifestTest, RefusesWhatRedisRefusesWithItsWords) {
  EXPECT_TRUE(ErrorFor("").starts_with("Found an empty AOF manifest")) << ErrorFor("");
  EXPECT_TRUE(ErrorFor("\n").starts_with("Invalid AOF manifest file format"));
  EXPECT_TRUE(ErrorFor("file a.aof seq 1\n").starts_with("Invalid AOF manifest file format"));
  EXPECT_TRUE(ErrorFor("file a.aof seq 0 type i\n").starts_with("Invalid AOF manifest"));
  EXPECT_TRUE(ErrorFor("file a.aof seq 1 type i").starts_with(
      "The AOF manifest file contains too long line"));
  EXPECT_TRUE(ErrorFor("file a.aof seq 1 type x\n").starts_with("Unknown AOF file type"));
  EXPECT_TRUE(ErrorFor("file d/a.aof seq 1 type i\n").starts_with(
      "File can't be a path, just a filename"));
  EXPECT_TRUE(ErrorFor("file a seq 1 type b\nfile b seq 2 type b\n")
                  .starts_with("Found duplicate base file information"));
  EXPECT_TRUE(ErrorFor("file a seq 2 type i\nfile b seq 2 type i\n")
                  .starts_with("Found a non-monotonic sequence number"));
  EXPECT_NE(ErrorFor("\n").find("line 1"), std::string::npos) << "says where";
}

TEST_F(ManifestTest, ReadsWhatRedisReads) {
  ASSERT_EQ(ErrorFor("# written by hand\nFILE b.rdb SEQ 3 TYPE b\nfile h.aof seq 1 type h\n"
                     "file i.aof seq 4 type i extra pair\n# a comment without newline"),
            "");
  const auto m = ReadManifest(path_);
  ASSERT_TRUE(m && m->base);
  EXPECT_EQ(m->base->name, "b.rdb");
  ASSERT_EQ(m->incrs.size(), 1u);
  EXPECT_EQ(m->incrs[0].seq, 4);
  // Comments alone name no file: Redis starts without an AOF to load, and so does latchd.
  EXPECT_EQ(ErrorFor("# nothing\n"), "");
  EXPECT_FALSE(ReadManifest(dir_ + "/none.manifest")) << "no manifest: a first start";
}

TEST(ManifestRestartTest, AnEmptiedManifestRefusesTheStart) {
  test::LatchdChild s({"--appendonly", "yes"});
  ASSERT_TRUE(s.Start()) << s.Log();
  {
    test::RawConnection c(s.port());
    ASSERT_EQ(c.Command("LOCK.ACQUIRE", "held", "owner", "600000").substr(0, 1), ":");
  }
  s.Kill9();
  fs::resize_file(s.aof_dir() + "/appendonly.aof.manifest", 0);
  EXPECT_FALSE(s.Start()) << "an empty server would grant the held lock again";
  EXPECT_NE(s.Log().find("Found an empty AOF manifest"), std::string::npos) << s.Log();
}

}  // namespace
}  // namespace latch::journal
