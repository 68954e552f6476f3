// The Kubernetes example (examples/k8s) checked without a cluster: the YAML parses, the Job
// runs `mecha batch` with a shard count equal to its completions, the files it reads exist
// in the ConfigMap and are ones mecha accepts, the results go to the shared volume, and the
// API key comes from a Secret.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "cli/batch/task.h"
#include "config/config.h"
#include "store/testing/temp_dir.h"

namespace mecha::cli {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every problem found in the example folder, as a sentence; empty when it is sound.
std::vector<std::string> check_k8s_example(const fs::path& dir) {
  std::vector<std::string> problems;
  auto problem = [&](std::string p) { problems.push_back(std::move(p)); };
  std::map<std::string, YAML::Node> by_kind;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string text = read(entry.path());
    std::vector<YAML::Node> docs;
    try {
      docs = YAML::LoadAll(text);
    } catch (const YAML::Exception& e) {
      problem(entry.path().filename().string() + ": " + e.what());
      continue;
    }
    for (const auto& doc : docs) {
      if (!doc["apiVersion"] || !doc["kind"] || !doc["metadata"]["name"]) {
        problem(entry.path().filename().string() +
                ": a document without apiVersion, kind or metadata.name");
        continue;
      }
      by_kind[doc["kind"].as<std::string>()] = doc;
    }
    // A literal API key in any file (they go in a Secret).
    if (std::regex_search(text, std::regex("sk-(ant-)?[A-Za-z0-9_-]{16,}")))
      problem(entry.path().filename().string() + ": holds what looks like an API key");
  }
  for (const char* kind : {"Job", "ConfigMap", "PersistentVolumeClaim"})
    if (!by_kind.count(kind)) problem(std::string("no ") + kind);
  if (!problems.empty()) return problems;

  const YAML::Node job = by_kind["Job"], config_map = by_kind["ConfigMap"],
                   pvc = by_kind["PersistentVolumeClaim"];
  const YAML::Node spec = job["spec"];
  if (spec["completionMode"].as<std::string>("") != "Indexed")
    problem("the Job's completionMode is not Indexed");
  const YAML::Node pod = spec["template"]["spec"];
  std::string restart = pod["restartPolicy"].as<std::string>("");
  if (restart != "Never" && restart != "OnFailure")
    problem("restartPolicy must be Never or OnFailure");
  const YAML::Node container = pod["containers"][0];
  std::string line;
  for (const auto& part : container["command"]) line += part.as<std::string>() + " ";
  for (const auto& part : container["args"]) line += part.as<std::string>() + " ";
  std::smatch m;
  if (!std::regex_search(line, m, std::regex(R"(mecha batch (\S+) )"))) {
    problem("the container does not run `mecha batch TASKS`");
    return problems;
  }
  const std::string tasks_path = m[1];
  if (!std::regex_search(line, m,
                         std::regex(R"re(--shard "?\$\{?JOB_COMPLETION_INDEX\}?/(\d+)"?)re")))
    problem("no --shard ${JOB_COMPLETION_INDEX}/N");
  else if (std::stoi(m[1]) != spec["completions"].as<int>(-1))
    problem("--shard's count " + std::string(m[1]) + " is not the Job's completions " +
            spec["completions"].as<std::string>("?"));
  std::string out, config_path;
  if (std::regex_search(line, m, std::regex(R"(--out (\S+))"))) out = m[1];
  if (std::regex_search(line, m, std::regex(R"(--config (\S+))"))) config_path = m[1];

  // Which volume each mount path comes from.
  std::map<std::string, YAML::Node> volumes;
  for (const auto& v : pod["volumes"])
    volumes[v["name"].as<std::string>()] = static_cast<const YAML::Node&>(v);
  auto mount_of = [&](const std::string& path) -> std::pair<YAML::Node, YAML::Node> {
    for (const auto& mount : container["volumeMounts"]) {
      std::string at = mount["mountPath"].as<std::string>();
      if (path.rfind(at + "/", 0) == 0) return {mount, volumes[mount["name"].as<std::string>()]};
    }
    return {YAML::Node(), YAML::Node()};
  };
  auto [out_mount, out_volume] = mount_of(out);
  if (out.empty() || !out_volume || !out_volume["persistentVolumeClaim"] ||
      out_volume["persistentVolumeClaim"]["claimName"].as<std::string>("") !=
          pvc["metadata"]["name"].as<std::string>() ||
      out_mount["readOnly"].as<bool>(false))
    problem("--out " + out + " is not on the PersistentVolumeClaim, mounted read-write");
  bool rwx = false;
  for (const auto& mode : pvc["spec"]["accessModes"])
    rwx |= mode.as<std::string>() == "ReadWriteMany";
  if (!rwx) problem("the volume is not ReadWriteMany, and shards on several nodes share it");

  // The files read from the ConfigMap: present, and ones mecha accepts.
  auto config_map_key = [&](const std::string& path) -> std::string {
    auto [mount, volume] = mount_of(path);
    if (!volume || !volume["configMap"] ||
        volume["configMap"]["name"].as<std::string>("") !=
            config_map["metadata"]["name"].as<std::string>()) {
      problem(path + " is not mounted from the ConfigMap");
      return "";
    }
    std::string file = path.substr(mount["mountPath"].as<std::string>().size() + 1);
    std::string key = file;
    for (const auto& item : volume["configMap"]["items"])
      if (item["path"].as<std::string>() == file) key = item["key"].as<std::string>();
    if (!config_map["data"][key]) {
      problem(path + ": the ConfigMap has no key " + key);
      return "";
    }
    return config_map["data"][key].as<std::string>();
  };
  std::string tasks = config_map_key(tasks_path);
  if (!tasks.empty()) {
    auto parsed = batch::parse_tasks(tasks, "tasks.jsonl", "/");
    if (!parsed) problem(parsed.status().message());
  }
  if (config_path.empty()) {
    problem("no --config");
  } else if (std::string toml = config_map_key(config_path); !toml.empty()) {
    auto parsed = config::parse_config(toml, "config.toml");
    if (!parsed) problem(parsed.status().message());
    std::smatch k;
    if (!std::regex_search(toml, k, std::regex(R"re(api_key_env = "([A-Z_]+)")re"))) {
      problem("config.toml names no api_key_env");
    } else {
      bool from_secret = false;
      for (const auto& env : container["env"])
        if (env["name"].as<std::string>() == std::string(k[1]))
          from_secret = env["valueFrom"]["secretKeyRef"]["name"].IsDefined() && !env["value"];
      if (!from_secret) problem(std::string(k[1]) + " does not come from a Secret (secretKeyRef)");
    }
  }
  return problems;
}

const fs::path kExample = fs::path(MECHA_SOURCE_DIR) / "examples/k8s";

TEST(K8sExample, IsAnIndexedJobMechaCanRun) {
  auto problems = check_k8s_example(kExample);
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
  EXPECT_TRUE(fs::exists(kExample / "README.md"));
}

TEST(K8sExample, TheCheckFindsWhatWouldBreakAJob) {
  struct Mutation {
    std::string file, from, to, problem;
  };
  const std::vector<Mutation> mutations = {
      {"job.yaml", "completions: 4", "completions: 5", "is not the Job's completions 5"},
      {"job.yaml", "completionMode: Indexed", "completionMode: NonIndexed",
       "completionMode is not Indexed"},
      {"job.yaml", "restartPolicy: Never", "restartPolicy: Always", "restartPolicy"},
      {"job.yaml", "--out /data/runs", "--out /etc/mecha/runs",
       "is not on the PersistentVolumeClaim"},
      {"job.yaml", "key: tasks.jsonl", "key: task.jsonl", "the ConfigMap has no key task.jsonl"},
      {"configmap.yaml", "\"id\": \"flaky-test\"", "\"id\": \"flaky test\"",
       "is not a safe file name"},
      {"configmap.yaml", "max_retries = 10", "max_retry = 10", "config.toml"},
      {"job.yaml",
       "valueFrom:\n                secretKeyRef:\n                  name: mecha-api-keys\n        "
       "          key: anthropic",
       "value: sk-ant-api03-abcdefghijklmnopqrstuvwxyz", "looks like an API key"},
      {"pvc.yaml", "[\"ReadWriteMany\"]", "[\"ReadWriteOnce\"]", "not ReadWriteMany"},
  };
  for (const Mutation& m : mutations) {
    store::testing::TempDir dir;
    for (const auto& entry : fs::directory_iterator(kExample))
      fs::copy(entry.path(), dir.path() / entry.path().filename());
    std::string text = read(dir.path() / m.file);
    size_t at = text.find(m.from);
    ASSERT_NE(at, std::string::npos) << m.from;
    text.replace(at, m.from.size(), m.to);
    std::ofstream(dir.path() / m.file) << text;
    auto problems = check_k8s_example(dir.path());
    std::string all = ::testing::PrintToString(problems);
    EXPECT_NE(all.find(m.problem), std::string::npos) << m.to << "\n  found: " << all;
  }
}

}  // namespace
}  // namespace mecha::cli
