/**
 * Words the generated search corpus is made of. English words are drawn with a skew (the first
 * ones are common, the last ones rare), so query classes can pick frequent and rare terms.
 */

const COMMON = `the deployment server database request user error config build release test worker queue session
message cache index search token model prompt memory schedule report team meeting budget review customer invoice
payment account password login network latency timeout retry backup restore migration schema table column query
result update delete insert create service container cluster node pod image volume secret certificate domain
proxy gateway endpoint webhook callback event stream channel thread reply answer question problem issue ticket
bug fix patch feature branch commit merge rebase pipeline deploy rollout rollback monitor alert dashboard metric
log trace span profile benchmark performance memory leak crash restart shutdown startup health check status
project plan goal deadline estimate priority backlog sprint roadmap design document spec proposal decision
office travel hotel flight train ticket visa passport airport lunch dinner coffee weekend holiday birthday
invoice contract lawyer insurance doctor appointment pharmacy recipe kitchen garden bicycle running weather`;

/** Rarer words, invented so they are not stop words and stem predictably. */
function inventedWords(count: number): string[] {
  const onsets = ['b', 'd', 'f', 'g', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'z', 'br', 'kr', 'st', 'tr'];
  const vowels = ['a', 'e', 'i', 'o', 'u'];
  const codas = ['x', 'n', 'r', 'l', 'm', 'th', 'sk', 'nd'];
  const words: string[] = [];
  for (let i = 0; words.length < count; i++) {
    const a = onsets[i % onsets.length] ?? 'b';
    const b = vowels[Math.floor(i / onsets.length) % vowels.length] ?? 'a';
    const c = onsets[Math.floor(i / (onsets.length * vowels.length)) % onsets.length] ?? 'd';
    const d = vowels[(i * 7) % vowels.length] ?? 'o';
    const e = codas[Math.floor(i / 3) % codas.length] ?? 'x';
    words.push(`${a}${b}${c}${d}${e}`);
  }
  return [...new Set(words)];
}

export const ENGLISH_WORDS: string[] = [...COMMON.split(/\s+/).filter((w) => w.length > 0), ...inventedWords(1400)];

export const CHINESE_WORDS = `北京 上海 广州 深圳 会议 报告 项目 服务器 数据库 部署 测试 发布 用户 客户 订单 支付 账户 密码 登录 网络
延迟 超时 重试 备份 恢复 迁移 缓存 索引 搜索 模型 内存 日志 监控 告警 性能 问题 修复 功能 分支 合并 流水线 容器 集群
节点 镜像 证书 域名 网关 接口 回调 事件 消息 线程 回复 酒店 机票 出差 午餐 咖啡 周末 假期 生日 合同 医生 天气 机器学习
人工智能 数据分析 产品经理 开发团队 预算 季度 目标 计划 设计 文档 决定 进度 风险 质量 安全 权限 配置 版本 升级`.split(/\s+/);

export const JAPANESE_WORDS = `東京 大阪 会議 報告 サーバー データベース デプロイ テスト リリース ユーザー 顧客 注文 支払い アカウント
パスワード ネットワーク 遅延 タイムアウト バックアップ 移行 キャッシュ 検索 モデル メモリ ログ 監視 性能 問題 修正 機能
ブランチ コンテナ クラスタ 証明書 ホテル 出張 昼食 週末 休暇 天気 予算 計画 設計 文書 品質 安全 設定 バージョン`.split(/\s+/);

export const KOREAN_WORDS = `서울 부산 회의 보고서 서버 데이터베이스 배포 테스트 출시 사용자 고객 주문 결제 계정 비밀번호 네트워크
지연 시간초과 백업 복구 마이그레이션 캐시 검색 모델 메모리 로그 모니터링 성능 문제 수정 기능 브랜치 컨테이너 클러스터
인증서 호텔 출장 점심 주말 휴가 날씨 예산 계획 설계 문서 품질 보안 설정 버전`.split(/\s+/);

export const CODE_WORDS = `getUserById parseConfig handleRequest createSession loadTranscript renderTemplate validateInput
retryWithBackoff ECONNREFUSED ETIMEDOUT NullPointerException TypeError undefined null await async const return
src/server/index.ts src/session/store.ts lib/config.py app/models/user.rb package.json Dockerfile main.go
SELECT FROM WHERE JOIN kubectl docker npm pytest cargo git rebase useEffect useState fetchJson toString`.split(/\s+/);

export const TOOL_NAMES = ['terminal', 'read_file', 'write_file', 'web_search', 'memory', 'todo', 'patch', 'search_files'];
