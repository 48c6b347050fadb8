#include "profiler/profile_db.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#ifdef CFP_HAVE_SQLITE
#include <sqlite3.h>
#endif

namespace cfp::profiler {

std::string_view commModeName(CommMode m) { return m == CommMode::Measured ? "measured" : "modelled"; }

std::string_view combinationStatusName(CombinationStatus s) {
    switch (s) {
        case CombinationStatus::Measured: return "measured";
        case CombinationStatus::Abandoned: return "abandoned";
        case CombinationStatus::Infeasible: return "infeasible";
        case CombinationStatus::Failed: return "failed";
    }
    return "?";
}

namespace {

[[maybe_unused]] std::optional<CommMode> parseCommMode(const std::string& s) {
    if (s == "measured") return CommMode::Measured;
    if (s == "modelled") return CommMode::Modelled;
    return std::nullopt;
}

[[maybe_unused]] std::optional<CombinationStatus> parseStatus(const std::string& s) {
    for (auto st : {CombinationStatus::Measured, CombinationStatus::Abandoned, CombinationStatus::Infeasible, CombinationStatus::Failed})
        if (combinationStatusName(st) == s) return st;
    return std::nullopt;
}

[[maybe_unused]] double unixNow() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

[[maybe_unused]] std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
    return buf;
}

[[maybe_unused]] std::optional<uint64_t> parseHex(const std::string& s) {
    if (s.size() != 18 || s[0] != '0' || s[1] != 'x') return std::nullopt;
    uint64_t v = 0;
    for (size_t i = 2; i < s.size(); ++i) {
        const char c = s[i];
        int d = 0;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else return std::nullopt;
        v = v * 16 + static_cast<uint64_t>(d);
    }
    return v;
}

[[maybe_unused]] std::string joinSamples(const std::vector<double>& v) {
    std::string s;
    char buf[40];
    for (size_t i = 0; i < v.size(); ++i) {
        std::snprintf(buf, sizeof buf, "%.17g", v[i]);
        s += (i ? "," : "") + std::string(buf);
    }
    return s;
}

[[maybe_unused]] std::vector<double> splitSamples(const std::string& s) {
    std::vector<double> out;
    std::stringstream in(s);
    std::string part;
    while (std::getline(in, part, ','))
        if (!part.empty()) out.push_back(std::strtod(part.c_str(), nullptr));
    return out;
}

[[maybe_unused]] std::string stamp() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
    return buf;
}

// Moves FILE and its -wal/-shm companions to FILE<suffix>…; returns the new main path.
[[maybe_unused]] Result<std::string> moveAside(const std::string& path, const std::string& suffix) {
    namespace fs = std::filesystem;
    std::string target = path + suffix + stamp();
    for (int i = 2; fs::exists(target); ++i) target = path + suffix + stamp() + "-" + std::to_string(i);
    std::error_code ec;
    fs::rename(path, target, ec);
    if (ec) return makeError("profile_db.io", "cannot move '" + path + "' aside to '" + target + "': " + ec.message(), path);
    for (const char* side : {"-wal", "-shm"}) {
        if (!fs::exists(path + side)) continue;
        fs::rename(path + side, target + side, ec);
        if (ec) return makeError("profile_db.io", "cannot move '" + path + side + "' aside: " + ec.message(), path);
    }
    return target;
}

}  // namespace

#ifdef CFP_HAVE_SQLITE

bool profileDbAvailable() { return true; }

namespace {

// One prepared statement; finalized on destruction.
class Stmt {
public:
    Stmt(sqlite3* db, const char* sql) : m_db(db) { m_rc = sqlite3_prepare_v2(db, sql, -1, &m_stmt, nullptr); }
    ~Stmt() { sqlite3_finalize(m_stmt); }
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;

    bool ok() const { return m_rc == SQLITE_OK; }
    Stmt& bind(int i, int64_t v) {
        sqlite3_bind_int64(m_stmt, i, v);
        return *this;
    }
    Stmt& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
    Stmt& bind(int i, double v) {
        sqlite3_bind_double(m_stmt, i, v);
        return *this;
    }
    Stmt& bind(int i, const std::string& v) {
        sqlite3_bind_text(m_stmt, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
        return *this;
    }
    // SQLITE_ROW, SQLITE_DONE or an error code.
    int step() { return m_rc = sqlite3_step(m_stmt); }
    int rc() const { return m_rc; }
    int64_t i64(int c) const { return sqlite3_column_int64(m_stmt, c); }
    double real(int c) const { return sqlite3_column_double(m_stmt, c); }
    std::string text(int c) const {
        const auto* p = sqlite3_column_text(m_stmt, c);
        return p ? reinterpret_cast<const char*>(p) : "";
    }
    std::string error() const { return sqlite3_errmsg(m_db); }

private:
    sqlite3* m_db;
    sqlite3_stmt* m_stmt = nullptr;
    int m_rc = SQLITE_OK;
};

Error sqlError(sqlite3* db, const std::string& what, const std::string& path) {
    return makeError("profile_db.sql", what + ": " + sqlite3_errmsg(db), path);
}

const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS hardware(
  id INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL UNIQUE,
  gpu_model TEXT NOT NULL, driver TEXT NOT NULL, cuda TEXT NOT NULL,
  gpus INTEGER NOT NULL, nodes INTEGER NOT NULL, interconnect TEXT NOT NULL, nccl TEXT NOT NULL,
  hardware_spec TEXT NOT NULL, created REAL NOT NULL, updated REAL NOT NULL);
CREATE TABLE IF NOT EXISTS segments(
  hardware_id INTEGER NOT NULL REFERENCES hardware(id),
  segment_signature TEXT NOT NULL, mesh TEXT NOT NULL, combination TEXT NOT NULL,
  label TEXT NOT NULL, segment_type INTEGER NOT NULL, model TEXT NOT NULL,
  status TEXT NOT NULL, comm TEXT NOT NULL, seconds REAL NOT NULL, samples TEXT NOT NULL,
  predicted_seconds REAL NOT NULL, memory_bytes INTEGER NOT NULL, modelled_comm_seconds REAL NOT NULL,
  kept INTEGER NOT NULL, protocol TEXT NOT NULL, note TEXT NOT NULL, created REAL NOT NULL,
  PRIMARY KEY(hardware_id, segment_signature, mesh, combination));
CREATE TABLE IF NOT EXISTS ops(
  hardware_id INTEGER NOT NULL REFERENCES hardware(id),
  signature TEXT NOT NULL, description TEXT NOT NULL, seconds REAL NOT NULL, samples INTEGER NOT NULL,
  comm TEXT NOT NULL, updated REAL NOT NULL,
  PRIMARY KEY(hardware_id, signature));
CREATE TABLE IF NOT EXISTS gemm_calibration(
  hardware_id INTEGER NOT NULL REFERENCES hardware(id),
  dtype TEXT NOT NULL, flops REAL NOT NULL, bytes REAL NOT NULL, efficiency REAL NOT NULL,
  PRIMARY KEY(hardware_id, dtype, flops, bytes));
CREATE TABLE IF NOT EXISTS scalar_calibration(
  hardware_id INTEGER NOT NULL REFERENCES hardware(id),
  name TEXT NOT NULL, value REAL NOT NULL,
  PRIMARY KEY(hardware_id, name));
CREATE TABLE IF NOT EXISTS collective_calibration(
  hardware_id INTEGER NOT NULL REFERENCES hardware(id),
  link TEXT NOT NULL, devices INTEGER NOT NULL, kind TEXT NOT NULL,
  alpha_seconds REAL NOT NULL, beta_seconds_per_byte REAL NOT NULL,
  PRIMARY KEY(hardware_id, link, devices, kind));
)sql";

const std::vector<std::string> kTables{"meta", "hardware", "segments", "ops", "gemm_calibration", "scalar_calibration",
                                       "collective_calibration"};

}  // namespace

struct ProfileDb::Impl {
    sqlite3* db = nullptr;
    std::string path;
    std::string movedAside;
    bool readOnly = false;
    ~Impl() {
        if (db) sqlite3_close_v2(db);
    }
    Status exec(const char* sql, const std::string& what) {
        char* err = nullptr;
        if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
            std::string msg = err ? err : "unknown error";
            sqlite3_free(err);
            return makeError("profile_db.sql", what + ": " + msg, path);
        }
        return {};
    }
    // Runs `body` in one transaction (committed when it succeeds, rolled back otherwise).
    template <typename F>
    Status transaction(F&& body) {
        if (readOnly) return makeError("profile_db.io", "the profile DB was opened read-only", path);
        CFP_TRY(exec("BEGIN IMMEDIATE", "begin"));
        Status st = body();
        if (!st) {
            static_cast<void>(exec("ROLLBACK", "rollback"));
            return st;
        }
        return exec("COMMIT", "commit");
    }
};

namespace {

Error damaged(const std::string& path, const std::string& why) {
    return makeError("profile_db.damaged",
                     "profile DB '" + path + "' is damaged or not a CFP profile DB (" + why +
                         "); nothing was changed. Move it away, or start a new DB (cfp profile --new-db), which keeps it as '" + path +
                         ".damaged-<time>'",
                     path);
}

// Checks an open file. Returns the schema version (0: an empty database, to be initialised).
Result<int> inspect(sqlite3* db, const std::string& path) {
    {
        Stmt check(db, "PRAGMA quick_check");
        if (!check.ok()) return damaged(path, sqlite3_errmsg(db));
        const int rc = check.step();
        if (rc != SQLITE_ROW) return damaged(path, sqlite3_errmsg(db));
        const std::string verdict = check.text(0);
        if (verdict != "ok") return damaged(path, "integrity check: " + verdict);
    }
    std::set<std::string> tables;
    {
        Stmt list(db, "SELECT name FROM sqlite_master WHERE type = 'table'");
        if (!list.ok()) return damaged(path, sqlite3_errmsg(db));
        while (list.step() == SQLITE_ROW) tables.insert(list.text(0));
        if (list.rc() != SQLITE_DONE) return damaged(path, sqlite3_errmsg(db));
    }
    if (tables.empty()) return 0;
    if (!tables.count("meta")) return damaged(path, "it has no 'meta' table");
    std::map<std::string, std::string> meta;
    {
        Stmt q(db, "SELECT key, value FROM meta");
        if (!q.ok()) return damaged(path, sqlite3_errmsg(db));
        while (q.step() == SQLITE_ROW) meta[q.text(0)] = q.text(1);
        if (q.rc() != SQLITE_DONE) return damaged(path, sqlite3_errmsg(db));
    }
    if (meta["format"] != "cfp-profile-db") return damaged(path, "its format is '" + meta["format"] + "', not 'cfp-profile-db'");
    char* end = nullptr;
    const long version = std::strtol(meta["schema_version"].c_str(), &end, 10);
    if (meta["schema_version"].empty() || !end || *end != '\0' || version < 1)
        return damaged(path, "schema version '" + meta["schema_version"] + "' is not a number");
    if (version > ProfileDb::kSchemaVersion)
        return makeError("profile_db.newer_schema",
                         "profile DB '" + path + "' has schema version " + std::to_string(version) + ", newer than this cfp understands (" +
                             std::to_string(ProfileDb::kSchemaVersion) + "); use a newer cfp, or another --db file",
                         path);
    for (const std::string& t : kTables)
        if (!tables.count(t)) return damaged(path, "table '" + t + "' is missing");
    return static_cast<int>(version);
}

}  // namespace

Result<ProfileDb> ProfileDb::open(const std::string& path, OpenMode mode) {
    namespace fs = std::filesystem;
    if (path.empty()) return makeError("profile_db.io", "no profile DB file given");
    ProfileDb out;
    out.m->path = path;
    out.m->readOnly = mode == OpenMode::ReadOnly;
    std::error_code ec;
    const bool exists = fs::exists(path, ec);
    if (mode == OpenMode::ReadOnly && !exists) return makeError("profile_db.io", "profile DB '" + path + "' does not exist", path);
    if (exists && fs::is_directory(path, ec)) return makeError("profile_db.io", "'" + path + "' is a directory, not a profile DB", path);

    auto openFile = [&](int flags) -> Status {
        if (out.m->db) {
            sqlite3_close_v2(out.m->db);
            out.m->db = nullptr;
        }
        if (sqlite3_open_v2(path.c_str(), &out.m->db, flags, nullptr) != SQLITE_OK) {
            std::string msg = out.m->db ? sqlite3_errmsg(out.m->db) : "out of memory";
            return makeError("profile_db.io", "cannot open profile DB '" + path + "': " + msg, path);
        }
        sqlite3_busy_timeout(out.m->db, 5000);
        return {};
    };
    const int rwFlags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    const int roFlags = SQLITE_OPEN_READONLY;
    int version = 0;
    if (exists) {
        CFP_TRY(openFile(mode == OpenMode::ReadOnly ? roFlags : SQLITE_OPEN_READWRITE));
        auto v = inspect(out.m->db, path);
        if (mode == OpenMode::StartNew && (v || v.error().code == "profile_db.damaged")) {
            sqlite3_close_v2(out.m->db);
            out.m->db = nullptr;
            auto moved = moveAside(path, v ? ".old-" : ".damaged-");
            if (!moved) return moved.error();
            out.m->movedAside = *moved;
            CFP_TRY(openFile(rwFlags));
            version = 0;
        } else if (!v) {
            return v.error();
        } else {
            version = *v;
        }
    } else {
        std::error_code dirEc;
        const fs::path parent = fs::path(path).parent_path();
        if (!parent.empty() && !fs::is_directory(parent, dirEc))
            return makeError("profile_db.io", "cannot create profile DB '" + path + "': folder '" + parent.string() + "' does not exist", path);
        CFP_TRY(openFile(rwFlags));
    }
    if (mode == OpenMode::ReadOnly) {
        if (version == 0) return damaged(path, "it is empty");
        return out;
    }
    CFP_TRY(out.m->exec("PRAGMA journal_mode=WAL", "enable WAL"));
    CFP_TRY(out.m->exec("PRAGMA foreign_keys=ON", "enable foreign keys"));
    if (version == 0) {
        CFP_TRY(out.m->transaction([&]() -> Status {
            CFP_TRY(out.m->exec(kSchema, "create the schema"));
            for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
                     {"format", "cfp-profile-db"},
                     {"schema_version", std::to_string(kSchemaVersion)},
                     {"created", std::to_string(static_cast<int64_t>(unixNow()))}}) {
                Stmt s(out.m->db, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)");
                s.bind(1, k).bind(2, v);
                if (s.step() != SQLITE_DONE) return sqlError(out.m->db, "write meta", path);
            }
            return {};
        }));
    }
    return out;
}

Result<int64_t> ProfileDb::hardwareId(const HardwareFingerprint& f, const std::string& hardwareSpec) {
    int64_t id = 0;
    CFP_TRY(m->transaction([&]() -> Status {
        const double now = unixNow();
        Stmt ins(m->db,
                 "INSERT INTO hardware(fingerprint, gpu_model, driver, cuda, gpus, nodes, interconnect, nccl, hardware_spec, created, updated) "
                 "VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(fingerprint) DO UPDATE SET hardware_spec = excluded.hardware_spec, "
                 "nccl = excluded.nccl, updated = excluded.updated");
        ins.bind(1, f.key()).bind(2, f.gpuModel).bind(3, f.driverVersion).bind(4, f.cudaVersion).bind(5, f.gpuCount).bind(6, f.nodes);
        ins.bind(7, f.interconnect).bind(8, f.ncclVersion).bind(9, hardwareSpec).bind(10, now).bind(11, now);
        if (ins.step() != SQLITE_DONE) return sqlError(m->db, "store the hardware fingerprint", m->path);
        Stmt q(m->db, "SELECT id FROM hardware WHERE fingerprint = ?");
        q.bind(1, f.key());
        if (q.step() != SQLITE_ROW) return sqlError(m->db, "read the hardware id", m->path);
        id = q.i64(0);
        return {};
    }));
    return id;
}

namespace {

const char* kHardwareSelect =
    "SELECT h.id, h.fingerprint, h.gpu_model, h.driver, h.cuda, h.gpus, h.nodes, h.interconnect, h.nccl, h.hardware_spec, h.created, "
    "h.updated, (SELECT COUNT(*) FROM segments s WHERE s.hardware_id = h.id), (SELECT COUNT(*) FROM ops o WHERE o.hardware_id = h.id), "
    "(SELECT COUNT(*) FROM scalar_calibration c WHERE c.hardware_id = h.id) + (SELECT COUNT(*) FROM gemm_calibration g WHERE "
    "g.hardware_id = h.id) + (SELECT COUNT(*) FROM collective_calibration k WHERE k.hardware_id = h.id) FROM hardware h ";

HardwareRecord hardwareRow(const Stmt& q) {
    HardwareRecord r;
    r.id = q.i64(0);
    r.key = q.text(1);
    r.fingerprint.gpuModel = q.text(2);
    r.fingerprint.driverVersion = q.text(3);
    r.fingerprint.cudaVersion = q.text(4);
    r.fingerprint.gpuCount = static_cast<int>(q.i64(5));
    r.fingerprint.nodes = static_cast<int>(q.i64(6));
    r.fingerprint.interconnect = q.text(7);
    r.fingerprint.ncclVersion = q.text(8);
    r.hardwareSpec = q.text(9);
    r.created = q.real(10);
    r.updated = q.real(11);
    r.segments = q.i64(12);
    r.ops = q.i64(13);
    r.calibrated = q.i64(14) > 0;
    return r;
}

}  // namespace

Result<std::vector<HardwareRecord>> ProfileDb::hardware() const {
    std::vector<HardwareRecord> out;
    Stmt q(m->db, (std::string(kHardwareSelect) + "ORDER BY h.updated DESC, h.id").c_str());
    if (!q.ok()) return sqlError(m->db, "list hardware", m->path);
    while (q.step() == SQLITE_ROW) out.push_back(hardwareRow(q));
    if (q.rc() != SQLITE_DONE) return sqlError(m->db, "list hardware", m->path);
    return out;
}

Result<std::vector<HardwareRecord>> ProfileDb::hardwareFor(const std::string& hardwareSpec) const {
    auto all = hardware();
    if (!all) return all.error();
    std::vector<HardwareRecord> out;
    for (auto& r : *all)
        if (r.hardwareSpec == hardwareSpec) out.push_back(std::move(r));
    return out;
}

Result<HardwareRecord> ProfileDb::hardwareByKey(const std::string& key) const {
    auto all = hardware();
    if (!all) return all.error();
    for (auto& r : *all)
        if (r.key == key) return std::move(r);
    return makeError("profile_db.not_found", "profile DB '" + m->path + "' has no hardware fingerprint '" + key + "'", m->path);
}

Status ProfileDb::putSegment(int64_t hardwareId, const SegmentRecord& r) {
    return m->transaction([&]() -> Status {
        Stmt s(m->db,
               "INSERT OR REPLACE INTO segments(hardware_id, segment_signature, mesh, combination, label, segment_type, model, status, comm, "
               "seconds, samples, predicted_seconds, memory_bytes, modelled_comm_seconds, kept, protocol, note, created) "
               "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
        s.bind(1, hardwareId).bind(2, r.segmentSignature).bind(3, r.mesh).bind(4, r.combination).bind(5, r.label).bind(6, r.segmentType);
        s.bind(7, r.model).bind(8, std::string(combinationStatusName(r.status))).bind(9, std::string(commModeName(r.comm)));
        s.bind(10, r.seconds).bind(11, joinSamples(r.samples)).bind(12, r.predictedSeconds).bind(13, r.memoryBytes);
        s.bind(14, r.modelledCommSeconds).bind(15, static_cast<int64_t>(r.kept ? 1 : 0)).bind(16, r.protocol).bind(17, r.note);
        s.bind(18, r.created > 0 ? r.created : unixNow());
        if (s.step() != SQLITE_DONE) return sqlError(m->db, "store a segment measurement", m->path);
        Stmt u(m->db, "UPDATE hardware SET updated = ? WHERE id = ?");
        u.bind(1, unixNow()).bind(2, hardwareId);
        if (u.step() != SQLITE_DONE) return sqlError(m->db, "update the hardware row", m->path);
        return {};
    });
}

namespace {

const char* kSegmentSelect =
    "SELECT segment_signature, mesh, combination, label, segment_type, model, status, comm, seconds, samples, predicted_seconds, "
    "memory_bytes, modelled_comm_seconds, kept, protocol, note, created FROM segments ";

Result<SegmentRecord> segmentRow(const Stmt& q, const std::string& path) {
    SegmentRecord r;
    r.segmentSignature = q.text(0);
    r.mesh = q.text(1);
    r.combination = q.text(2);
    r.label = q.text(3);
    r.segmentType = static_cast<int>(q.i64(4));
    r.model = q.text(5);
    auto st = parseStatus(q.text(6));
    auto cm = parseCommMode(q.text(7));
    if (!st || !cm) return damaged(path, "a segment row has status '" + q.text(6) + "' and comm '" + q.text(7) + "'");
    r.status = *st;
    r.comm = *cm;
    r.seconds = q.real(8);
    r.samples = splitSamples(q.text(9));
    r.predictedSeconds = q.real(10);
    r.memoryBytes = q.i64(11);
    r.modelledCommSeconds = q.real(12);
    r.kept = q.i64(13) != 0;
    r.protocol = q.text(14);
    r.note = q.text(15);
    r.created = q.real(16);
    return r;
}

}  // namespace

Result<std::optional<SegmentRecord>> ProfileDb::findSegment(int64_t hardwareId, const std::string& sig, const std::string& mesh,
                                                            const std::string& combination) const {
    Stmt q(m->db, (std::string(kSegmentSelect) + "WHERE hardware_id = ? AND segment_signature = ? AND mesh = ? AND combination = ?").c_str());
    q.bind(1, hardwareId).bind(2, sig).bind(3, mesh).bind(4, combination);
    const int rc = q.step();
    if (rc == SQLITE_DONE) return std::optional<SegmentRecord>{};
    if (rc != SQLITE_ROW) return sqlError(m->db, "read a segment measurement", m->path);
    auto r = segmentRow(q, m->path);
    if (!r) return r.error();
    return std::optional<SegmentRecord>(std::move(*r));
}

Result<std::vector<SegmentRecord>> ProfileDb::segments(int64_t hardwareId, const std::string& sig) const {
    std::string sql = std::string(kSegmentSelect) + "WHERE hardware_id = ?" + (sig.empty() ? "" : " AND segment_signature = ?") +
                      " ORDER BY segment_signature, mesh, combination";
    Stmt q(m->db, sql.c_str());
    q.bind(1, hardwareId);
    if (!sig.empty()) q.bind(2, sig);
    std::vector<SegmentRecord> out;
    while (q.step() == SQLITE_ROW) {
        auto r = segmentRow(q, m->path);
        if (!r) return r.error();
        out.push_back(std::move(*r));
    }
    if (q.rc() != SQLITE_DONE) return sqlError(m->db, "read segment measurements", m->path);
    return out;
}

Status ProfileDb::setKept(int64_t hardwareId, const std::string& sig, const std::string& mesh, const std::vector<std::string>& kept) {
    return m->transaction([&]() -> Status {
        Stmt clear(m->db, "UPDATE segments SET kept = 0 WHERE hardware_id = ? AND segment_signature = ? AND mesh = ?");
        clear.bind(1, hardwareId).bind(2, sig).bind(3, mesh);
        if (clear.step() != SQLITE_DONE) return sqlError(m->db, "update kept combinations", m->path);
        for (const std::string& c : kept) {
            Stmt s(m->db, "UPDATE segments SET kept = 1 WHERE hardware_id = ? AND segment_signature = ? AND mesh = ? AND combination = ?");
            s.bind(1, hardwareId).bind(2, sig).bind(3, mesh).bind(4, c);
            if (s.step() != SQLITE_DONE) return sqlError(m->db, "update kept combinations", m->path);
        }
        return {};
    });
}

Status ProfileDb::putOps(int64_t hardwareId, const std::vector<OpRecord>& ops, CommMode comm) {
    if (ops.empty()) return {};
    return m->transaction([&]() -> Status {
        for (const OpRecord& o : ops) {
            if (o.samples <= 0 || !(o.seconds > 0)) continue;
            Stmt s(m->db,
                   "INSERT INTO ops(hardware_id, signature, description, seconds, samples, comm, updated) VALUES (?,?,?,?,?,?,?) "
                   "ON CONFLICT(hardware_id, signature) DO UPDATE SET "
                   "seconds = (ops.seconds * ops.samples + excluded.seconds * excluded.samples) / (ops.samples + excluded.samples), "
                   "samples = ops.samples + excluded.samples, updated = excluded.updated");
            s.bind(1, hardwareId).bind(2, hex(o.signature)).bind(3, o.description).bind(4, o.seconds).bind(5, o.samples);
            s.bind(6, std::string(commModeName(comm))).bind(7, unixNow());
            if (s.step() != SQLITE_DONE) return sqlError(m->db, "store op measurements", m->path);
        }
        return {};
    });
}

Result<std::vector<OpRecord>> ProfileDb::ops(int64_t hardwareId) const {
    Stmt q(m->db, "SELECT signature, description, seconds, samples FROM ops WHERE hardware_id = ? ORDER BY signature");
    q.bind(1, hardwareId);
    std::vector<OpRecord> out;
    while (q.step() == SQLITE_ROW) {
        auto sig = parseHex(q.text(0));
        if (!sig) return damaged(m->path, "an op signature reads '" + q.text(0) + "'");
        out.push_back({*sig, q.text(1), q.real(2), q.i64(3)});
    }
    if (q.rc() != SQLITE_DONE) return sqlError(m->db, "read op measurements", m->path);
    return out;
}

Status ProfileDb::putCalibration(int64_t hardwareId, const CostCalibration& c) {
    return m->transaction([&]() -> Status {
        for (const GemmEfficiencyPoint& p : c.gemm) {
            Stmt s(m->db, "INSERT OR REPLACE INTO gemm_calibration(hardware_id, dtype, flops, bytes, efficiency) VALUES (?,?,?,?,?)");
            s.bind(1, hardwareId).bind(2, std::string(dtypeName(p.dtype))).bind(3, p.flops).bind(4, p.bytes).bind(5, p.efficiency);
            if (s.step() != SQLITE_DONE) return sqlError(m->db, "store the GEMM calibration", m->path);
        }
        auto scalar = [&](const char* name, double v) -> Status {
            Stmt s(m->db, "INSERT OR REPLACE INTO scalar_calibration(hardware_id, name, value) VALUES (?,?,?)");
            s.bind(1, hardwareId).bind(2, std::string(name)).bind(3, v);
            if (s.step() != SQLITE_DONE) return sqlError(m->db, "store the calibration", m->path);
            return {};
        };
        if (c.hbmBytesPerSecond > 0) CFP_TRY(scalar("hbm_bytes_per_second", c.hbmBytesPerSecond));
        if (c.launchSeconds >= 0) CFP_TRY(scalar("launch_seconds", c.launchSeconds));
        for (const CollectiveFit& f : c.collectives) {
            Stmt s(m->db,
                   "INSERT OR REPLACE INTO collective_calibration(hardware_id, link, devices, kind, alpha_seconds, beta_seconds_per_byte) "
                   "VALUES (?,?,?,?,?,?)");
            s.bind(1, hardwareId).bind(2, std::string(linkClassName(f.link))).bind(3, f.devices);
            s.bind(4, std::string(collectiveKindName(f.kind))).bind(5, f.alphaSeconds).bind(6, f.betaSecondsPerByte);
            if (s.step() != SQLITE_DONE) return sqlError(m->db, "store the collective calibration", m->path);
        }
        return {};
    });
}

Result<CostCalibration> ProfileDb::calibration(int64_t hardwareId) const {
    CostCalibration c;
    {
        Stmt q(m->db, "SELECT dtype, flops, bytes, efficiency FROM gemm_calibration WHERE hardware_id = ? ORDER BY dtype, flops, bytes");
        q.bind(1, hardwareId);
        while (q.step() == SQLITE_ROW) {
            auto dt = parseDType(q.text(0));
            if (!dt) return damaged(m->path, "a GEMM calibration row has dtype '" + q.text(0) + "'");
            c.gemm.push_back({*dt, q.real(1), q.real(2), q.real(3)});
        }
        if (q.rc() != SQLITE_DONE) return sqlError(m->db, "read the GEMM calibration", m->path);
    }
    {
        Stmt q(m->db, "SELECT name, value FROM scalar_calibration WHERE hardware_id = ?");
        q.bind(1, hardwareId);
        while (q.step() == SQLITE_ROW) {
            if (q.text(0) == "hbm_bytes_per_second") c.hbmBytesPerSecond = q.real(1);
            else if (q.text(0) == "launch_seconds") c.launchSeconds = q.real(1);
        }
        if (q.rc() != SQLITE_DONE) return sqlError(m->db, "read the calibration", m->path);
    }
    {
        Stmt q(m->db,
               "SELECT link, devices, kind, alpha_seconds, beta_seconds_per_byte FROM collective_calibration WHERE hardware_id = ? "
               "ORDER BY link, devices, kind");
        q.bind(1, hardwareId);
        while (q.step() == SQLITE_ROW) {
            CollectiveFit f;
            const std::string link = q.text(0), kind = q.text(2);
            bool linkOk = false, kindOk = false;
            for (LinkClass l : {LinkClass::IntraNode, LinkClass::InterNode})
                if (linkClassName(l) == link) {
                    f.link = l;
                    linkOk = true;
                }
            for (CollectiveKind k : {CollectiveKind::AllGather, CollectiveKind::ReduceScatter, CollectiveKind::AllReduce, CollectiveKind::AllToAll})
                if (collectiveKindName(k) == kind) {
                    f.kind = k;
                    kindOk = true;
                }
            if (!linkOk || !kindOk) return damaged(m->path, "a collective calibration row has link '" + link + "' and kind '" + kind + "'");
            f.devices = q.i64(1);
            f.alphaSeconds = q.real(3);
            f.betaSecondsPerByte = q.real(4);
            c.collectives.push_back(f);
        }
        if (q.rc() != SQLITE_DONE) return sqlError(m->db, "read the collective calibration", m->path);
    }
    return c;
}

#else  // no SQLite

bool profileDbAvailable() { return false; }

struct ProfileDb::Impl {
    std::string path, movedAside;
};

namespace {
Error unavailable() { return makeError("profile_db.unavailable", "built without SQLite (libsqlite3-dev was not found at configure time)"); }
}  // namespace

Result<ProfileDb> ProfileDb::open(const std::string&, OpenMode) { return unavailable(); }
Result<int64_t> ProfileDb::hardwareId(const HardwareFingerprint&, const std::string&) { return unavailable(); }
Result<std::vector<HardwareRecord>> ProfileDb::hardware() const { return unavailable(); }
Result<std::vector<HardwareRecord>> ProfileDb::hardwareFor(const std::string&) const { return unavailable(); }
Result<HardwareRecord> ProfileDb::hardwareByKey(const std::string&) const { return unavailable(); }
Status ProfileDb::putSegment(int64_t, const SegmentRecord&) { return unavailable(); }
Result<std::optional<SegmentRecord>> ProfileDb::findSegment(int64_t, const std::string&, const std::string&, const std::string&) const {
    return unavailable();
}
Result<std::vector<SegmentRecord>> ProfileDb::segments(int64_t, const std::string&) const { return unavailable(); }
Status ProfileDb::setKept(int64_t, const std::string&, const std::string&, const std::vector<std::string>&) { return unavailable(); }
Status ProfileDb::putOps(int64_t, const std::vector<OpRecord>&, CommMode) { return unavailable(); }
Result<std::vector<OpRecord>> ProfileDb::ops(int64_t) const { return unavailable(); }
Status ProfileDb::putCalibration(int64_t, const CostCalibration&) { return unavailable(); }
Result<CostCalibration> ProfileDb::calibration(int64_t) const { return unavailable(); }

#endif

ProfileDb::ProfileDb() : m(std::make_unique<Impl>()) {}
ProfileDb::ProfileDb(ProfileDb&&) noexcept = default;
ProfileDb& ProfileDb::operator=(ProfileDb&&) noexcept = default;
ProfileDb::~ProfileDb() = default;
const std::string& ProfileDb::path() const { return m->path; }
const std::string& ProfileDb::movedAside() const { return m->movedAside; }

std::string simulatedDbPath(const std::string& dbPath) {
    static const std::string kSuffix = ".simulated.db";
    if (dbPath.size() >= kSuffix.size() && dbPath.compare(dbPath.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0) return dbPath;
    const size_t slash = dbPath.find_last_of("/\\");
    const size_t dot = dbPath.find_last_of('.');
    if (dot != std::string::npos && (slash == std::string::npos || dot > slash + 1)) return dbPath.substr(0, dot) + kSuffix;
    return dbPath + kSuffix;
}

Result<PlanningMeasurements> planningMeasurements(const std::string& dbPath, const std::string& hardwareSpec, const std::string& key) {
    auto db = ProfileDb::open(dbPath, ProfileDb::OpenMode::ReadOnly);
    if (!db) return db.error();
    PlanningMeasurements out;
    if (!key.empty()) {
        auto h = db->hardwareByKey(key);
        if (!h) return h.error();
        out.hardware = std::move(*h);
    } else {
        auto matches = db->hardwareFor(hardwareSpec);
        if (!matches) return matches.error();
        if (matches->empty()) {
            auto all = db->hardware();
            if (!all) return all.error();
            std::string have;
            for (const HardwareRecord& r : *all) have += (have.empty() ? "" : "; ") + r.hardwareSpec + " on '" + r.key + "'";
            return makeError("profile_db.not_found", "profile DB '" + dbPath + "' has no measurements profiled as hardware '" + hardwareSpec +
                                                         "' (" + (have.empty() ? std::string("it is empty") : "it has: " + have) +
                                                         "); profile with `cfp profile --hardware " + hardwareSpec + "` or plan with that --hardware",
                             dbPath);
        }
        // hardwareFor lists the most recently updated first; a real fingerprint wins over any simulated one.
        auto real = std::find_if(matches->begin(), matches->end(), [](const HardwareRecord& r) { return !r.fingerprint.simulated(); });
        out.hardware = std::move(real != matches->end() ? *real : matches->front());
    }
    auto ops = db->ops(out.hardware.id);
    if (!ops) return ops.error();
    for (const OpRecord& o : *ops) out.measured.emplace_back(o.signature, o.seconds);
    auto cal = db->calibration(out.hardware.id);
    if (!cal) return cal.error();
    out.calibration = std::move(*cal);
    return out;
}

}  // namespace cfp::profiler
