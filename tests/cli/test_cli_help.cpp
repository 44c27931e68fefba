// The help texts against themselves and against the README: every subcommand's --help lists its
// options and ends with examples that use only those options, and the README's "Using it" table
// names only subcommands and options that the help texts list, and every subcommand they list.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tune_runner.hpp"

namespace {

using cutune::testing::CommandRun;
using cutune::testing::tune;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

std::string joined(const std::vector<std::string>& words, std::size_t count) {
  std::string text;
  for (std::size_t i = 0; i < count && i < words.size(); ++i) text += (i ? " " : "") + words[i];
  return text;
}

// One help text, read the way CLI11 writes it.
struct Help {
  std::set<std::string> options;         // every long option of its option lines ("--kernel")
  std::vector<std::string> subcommands;  // its "Subcommands:" section, in order
  std::vector<std::string> examples;     // the commands under its closing "Examples:"
};

// `tune PATH --help`, which must succeed. Option lines are indented by two spaces and start with
// a dash ("  -k,--kernel TEXT   …"); a description wrapped onto its own line is indented further.
Help help_of(const std::string& path) {
  const CommandRun run = tune(path + (path.empty() ? "" : " ") + "--help");
  EXPECT_EQ(run.exit_code, 0) << path << ": " << run.err;
  Help help;
  std::string section;
  for (const std::string& line : lines_of(run.out)) {
    if (!line.empty() && line[0] != ' ') {
      section = line;
      continue;
    }
    if (line.rfind("  ", 0) != 0 || line.size() < 3 || line[2] == ' ') continue;
    const std::string first = line.substr(2, line.find(' ', 2) - 2);
    if (section == "Examples:")
      help.examples.push_back(line.substr(2));
    else if (section == "Subcommands:")
      help.subcommands.push_back(first);
    else if (first[0] == '-') {
      std::istringstream names(first);
      for (std::string name; std::getline(names, name, ',');)
        if (name.rfind("--", 0) == 0) help.options.insert(name);
    }
  }
  EXPECT_FALSE(help.options.empty()) << "no options read from tune " << path << " --help:\n" << run.out;
  return help;
}

// The long options a command's words name: "--restrict" of `[--restrict EXPR]`, "--within" of `--within=5`.
std::vector<std::string> long_options(const std::vector<std::string>& words) {
  static const std::regex option(R"(^\[?(--[a-z][a-z0-9-]*))");
  std::vector<std::string> found;
  std::smatch m;
  for (const std::string& word : words)
    if (std::regex_search(word, m, option)) found.push_back(m[1]);
  return found;
}

// A command's subcommand path ("db best"; "" for the short form of tune run) and the words after
// it, given the words after `tune`. A word where a subcommand goes must be one.
struct Command {
  std::string path;
  std::vector<std::string> rest;
};

class HelpTexts {
 public:
  const Help& of(const std::string& path) {
    auto found = helps_.find(path);
    if (found == helps_.end()) found = helps_.emplace(path, help_of(path)).first;
    return found->second;
  }

  Command split(const std::vector<std::string>& words, const std::string& where) {
    Command command;
    std::size_t i = 0;
    for (; i < words.size(); ++i) {
      const auto& subcommands = of(command.path).subcommands;
      if (subcommands.empty() || words[i][0] == '-' || words[i][0] == '[') break;
      const bool known = std::find(subcommands.begin(), subcommands.end(), words[i]) != subcommands.end();
      EXPECT_TRUE(known) << where << ": '" << words[i] << "' is no subcommand of tune " << command.path;
      if (!known) break;
      command.path += (command.path.empty() ? "" : " ") + words[i];
    }
    command.rest.assign(words.begin() + static_cast<std::ptrdiff_t>(i), words.end());
    return command;
  }

  void expect_options_listed(const Command& command, const std::string& where) {
    const Help& help = of(command.path);
    for (const std::string& option : long_options(command.rest))
      EXPECT_TRUE(help.options.count(option))
          << where << ": " << option << " is not in tune " << command.path << " --help";
  }

 private:
  std::map<std::string, Help> helps_;
};

// Every subcommand path, depth first: "run", …, "db", "db devices", ….
std::vector<std::string> every_path(HelpTexts& helps, const std::string& path = "") {
  std::vector<std::string> paths;
  for (const std::string& sub : helps.of(path).subcommands) {
    const std::string full = path.empty() ? sub : path + " " + sub;
    paths.push_back(full);
    for (const std::string& deeper : every_path(helps, full)) paths.push_back(deeper);
  }
  return paths;
}

// The `tune …` commands of the first column of the README's "Using it" table, each with where it
// stands. A cell may hold several (`tune db devices` / `tune db runs …`); a span without `tune`
// (`--devices all`) continues the cell's previous command.
std::vector<std::pair<std::vector<std::string>, std::string>> readme_table_commands() {
  std::ifstream file(std::string(CUTUNE_SOURCE_DIR) + "/README.md");
  std::stringstream text;
  text << file.rdbuf();
  const std::vector<std::string> lines = lines_of(text.str());
  auto line = std::find(lines.begin(), lines.end(), "## Using it");
  EXPECT_NE(line, lines.end()) << "README.md has no '## Using it'";
  line = std::find_if(line, lines.end(), [](const std::string& l) { return l.rfind("| command |", 0) == 0; });
  EXPECT_NE(line, lines.end()) << "no command table under '## Using it'";
  std::vector<std::pair<std::vector<std::string>, std::string>> commands;
  for (line += 2; line != lines.end() && line->rfind("|", 0) == 0; ++line) {
    // The first cell ends at the first '|' outside backticks.
    std::string cell;
    bool quoted = false;
    for (std::size_t i = 1; i < line->size() && (quoted || (*line)[i] != '|'); ++i) {
      quoted ^= (*line)[i] == '`';
      cell += (*line)[i];
    }
    std::vector<std::string> previous;
    for (std::size_t open = cell.find('`'); open != std::string::npos; open = cell.find('`', open)) {
      const std::size_t close = cell.find('`', open + 1);
      const std::vector<std::string> words = words_of(cell.substr(open + 1, close - open - 1));
      open = close + 1;
      const auto at = std::find(words.begin(), words.end(), "tune");
      std::vector<std::string> command = at == words.end() ? previous : std::vector<std::string>(at + 1, words.end());
      if (at == words.end())
        command.insert(command.end(), words.begin(), words.end());
      else
        previous = command;
      commands.emplace_back(command, "README.md table row '" + cell.substr(0, 60) + "'");
    }
  }
  EXPECT_GT(commands.size(), 20u);
  return commands;
}

}  // namespace

TEST(CliHelp, EverySubcommandsHelpEndsWithExamplesThatUseItsOptions) {
  HelpTexts helps;
  const std::vector<std::string> paths = every_path(helps);
  for (const char* expected : {"run", "compile", "simulate", "strategies", "space", "families", "report", "db",
                               "db best", "db lookup", "db import-kt"})
    EXPECT_NE(std::find(paths.begin(), paths.end(), expected), paths.end()) << expected;
  std::vector<std::string> with_tune{""};  // tune's own help too
  with_tune.insert(with_tune.end(), paths.begin(), paths.end());
  for (const std::string& path : with_tune) {
    const Help& help = helps.of(path);
    ASSERT_FALSE(help.examples.empty()) << "tune " << path << " --help ends with no examples";
    EXPECT_LE(help.examples.size(), 2u) << path;
    for (const std::string& example : help.examples) {
      const std::vector<std::string> words = words_of(example);
      ASSERT_EQ(words.at(0), "tune") << example;
      const Command command = helps.split({words.begin() + 1, words.end()}, "tune " + path + " --help");
      // tune's own examples show other subcommands; a subcommand's show itself (db: its subcommands).
      if (!path.empty()) {
        EXPECT_EQ(command.path.rfind(path, 0), 0u) << example << " in tune " << path << " --help";
      }
      helps.expect_options_listed(command, "example '" + example + "'");
    }
  }
}

TEST(CliHelp, TheReadmesCommandTableAndTheHelpTextsAgree) {
  HelpTexts helps;
  std::set<std::string> named;  // the subcommand paths the table names
  for (const auto& [words, where] : readme_table_commands()) {
    const Command command = helps.split(words, where);
    for (std::size_t end = command.path.find(' '); end != std::string::npos; end = command.path.find(' ', end + 1))
      named.insert(command.path.substr(0, end));  // `tune db best` names `tune db` too
    named.insert(command.path);
    helps.expect_options_listed(command, where + ", `tune " + joined(words, 8) + " …`");
  }
  // Every subcommand tune --help lists, and every db subcommand, is in the table.
  for (const std::string& path : every_path(helps))
    EXPECT_TRUE(named.count(path)) << "tune " << path << " is in tune --help but not in the README's table";
}

// The short form takes what tune run takes: its --help lists every option of tune run's.
TEST(CliHelp, TheShortFormTakesEveryOptionOfRun) {
  HelpTexts helps;
  for (const std::string& option : helps.of("run").options)
    EXPECT_TRUE(helps.of("").options.count(option)) << option << " is in tune run --help, not in tune --help";
}
